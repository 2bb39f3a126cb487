"""Shared fixtures: a knowledge root written through the real store, and its real Tantivy index.

`kb` is an empty root in `tmp_path`; tests write sessions and steps the way the recorder does,
then query it through `KnowledgeEngine` exactly like the CLI and the MCP server. The clock is
fixed (`Knowledge.now`), so recency and `sinceHours` never depend on when the suite runs.
"""

import os
import shutil
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings

from engine import KnowledgeEngine
from engine.core import SearchInput, SearchPage, validate
from engine.index import SyncReport, ensure_index
from engine.meaning import EMBED_TIMEOUT_ENV
from engine.records import (
    A11yNode,
    A11ySnapshot,
    GitInfo,
    KnowledgeStore,
    Observation,
    Outcome,
    ScreenState,
    SessionMetadata,
    StepError,
    StepRecord,
    StepTarget,
    TestIdItem,
    ToolCall,
)
from server.demo import SAMPLE_ROOT

# `pytest --hypothesis-profile=stress` digs deeper before a release.
settings.register_profile(
    "knowhow", deadline=None, suppress_health_check=[HealthCheck.too_slow], print_blob=True
)
settings.register_profile("stress", parent=settings.get_profile("knowhow"), max_examples=5000)
settings.load_profile("knowhow")

FIXED_NOW = datetime(2026, 1, 15, 12, 0, tzinfo=UTC)
STEP_INTERVAL = timedelta(seconds=10)

# A loaded machine (2 shared cores) can starve the embedding thread past the 1 s default and
# turn hybrid answers into keyword ones: every engine of the suite, in process or in the
# servers and CLIs it starts, waits 30 s (the timeout test sets its own).
os.environ[EMBED_TIMEOUT_ENV] = "30000"


def bytes_read() -> int:
    """What this process has read so far (Linux's count of bytes read, `rchar`): what a read
    cost, asserted without a clock."""
    fields = dict(line.split(": ") for line in Path("/proc/self/io").read_text().splitlines())
    return int(fields["rchar"])


def iso(moment: datetime) -> str:
    """The recorder's timestamp format: `2026-01-15T12:00:00.000Z`."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class Knowledge:
    """A knowledge root and index directory under one temp folder.

    `session()` writes `session.json`; `step()` records the next step (10 s after the previous
    one of the session, unless `at` is given); `engine()` brings the index up to date and opens
    an engine on it with the fixed clock.
    """

    now = FIXED_NOW

    def __init__(self, base: Path) -> None:
        self.root = base / "llm-knowledge"
        self.index_dir = base / "index-data"
        self.store = KnowledgeStore(self.root)
        self.clock: dict[str, datetime] = {}

    def session(
        self,
        session_id: str,
        *,
        hours_ago: float = 1.0,
        goal: str | None = None,
        flow_tags: Iterable[str] = (),
        tags: Iterable[str] = (),
        branch: str | None = None,
        **extra: Any,
    ) -> str:
        created = FIXED_NOW - timedelta(hours=hours_ago)
        self.clock[session_id] = created
        self.store.write_session(
            SessionMetadata(
                sessionId=session_id,
                createdAt=iso(created),
                goal=goal,
                flowTags=list(flow_tags),
                tags=list(tags),
                git=GitInfo(branch=branch, commit="abc123") if branch else None,
                **extra,
            )
        )
        return session_id

    def record(
        self,
        session_id: str,
        tool: str = "mm_click",
        *,
        test_id: str | None = None,
        selector: str | None = None,
        a11y_ref: str | None = None,
        text: str | None = None,
        redacted: bool | None = None,
        ok: bool = True,
        error: tuple[str, str] | None = None,
        screen: str | None = "home",
        url: str | None = None,
        test_ids: Iterable[str | tuple[str, str]] = (),
        a11y: Iterable[tuple[str, str, str]] = (),
        labels: list[str] | None = None,
        at: datetime | None = None,
    ) -> StepRecord:
        """The record `step()` would write (for tests that write files themselves)."""
        if at is None:
            at = self.clock.get(session_id, FIXED_NOW - timedelta(hours=2)) + STEP_INTERVAL
        self.clock[session_id] = at
        has_target = test_id or selector or a11y_ref
        items = [
            TestIdItem(testId=t) if isinstance(t, str) else TestIdItem(testId=t[0], text=t[1])
            for t in test_ids
        ]
        return StepRecord(
            timestamp=iso(at),
            sessionId=session_id,
            tool=ToolCall(
                name=tool,
                input={"text": text} if text is not None else None,
                target=(
                    StepTarget(testId=test_id, selector=selector, a11yRef=a11y_ref)
                    if has_target
                    else None
                ),
                textRedacted=redacted,
            ),
            outcome=Outcome(
                ok=ok,
                error=StepError(code=error[0], message=error[1]) if error else None,
            ),
            observation=Observation(
                state=ScreenState(currentScreen=screen, currentUrl=url),
                testIds=items,
                a11y=A11ySnapshot(
                    nodes=[A11yNode(ref=ref, role=role, name=name) for ref, role, name in a11y]
                ),
            ),
            labels=labels,
        )

    def step(self, session_id: str, tool: str = "mm_click", **fields: Any) -> str:
        """Record a step through the store; returns its step id (`<session>/<NNNN>-<tool>`)."""
        return self.store.record_step(self.record(session_id, tool, **fields))

    def not_found(
        self, session_id: str, test_id: str, tool: str = "mm_click", **fields: Any
    ) -> str:
        """Record an action on `test_id` that failed because the element was not there."""
        error = ("MM_TARGET_NOT_FOUND", f"Element not found: {test_id}")
        return self.step(session_id, tool, test_id=test_id, ok=False, error=error, **fields)

    def index(self) -> SyncReport:
        return ensure_index(self.store, self.index_dir)

    def engine(self, **options: Any) -> KnowledgeEngine:
        self.index()
        return KnowledgeEngine(self.root, self.index_dir, now=lambda: FIXED_NOW, **options)

    def search(
        self, query: str, *, current_session: str | None = None, **fields: Any
    ) -> SearchPage:
        """Index, then search through the validated input model (as the tools do)."""
        request = validate(SearchInput, {"query": query, **fields})
        return self.engine().search(request, current_session=current_session)


@pytest.fixture
def kb(tmp_path: Path) -> Knowledge:
    return Knowledge(tmp_path)


@pytest.fixture(scope="module")
def module_kb(tmp_path_factory: pytest.TempPathFactory) -> Knowledge:
    """A root shared by one module's read-only tests (build it once, in a module fixture)."""
    return Knowledge(tmp_path_factory.mktemp("knowledge"))


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> KnowledgeEngine:
    """The bundled sample sessions that `knowhow demo` / `make run` install, indexed."""
    base = tmp_path_factory.mktemp("sample")
    root = shutil.copytree(SAMPLE_ROOT, base / "root")  # indexing writes decisions into a root
    ensure_index(KnowledgeStore(root), base / "index")
    return KnowledgeEngine(root, base / "index")
