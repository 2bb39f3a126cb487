"""Starting a recorded session: a fresh id, git state of the working copy, `session.json`.

For harnesses that drive the browser themselves and record through `mm_knowledge_start_session`
and `mm_knowledge_record_step`. Git branch, commit and dirtiness are read from the server's
working directory with the `git` command; without git (or outside a repository) they are left
out, never an error.
"""

import contextlib
import logging
import secrets
import string
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import ValidationError

from engine import (
    GitInfo,
    InvalidInput,
    KnowledgeStore,
    SessionMetadata,
    StepRecord,
    labelled,
    now_iso,
    scrub_step,
    unresolved_refs,
)
from server.inputs import StartSessionInput

log = logging.getLogger(__name__)

GIT_TIMEOUT_SECONDS = 3.0
EARLIER_SNAPSHOT_STEPS = 50
"""How far back `earlier_refs` looks for the snapshot an `a11yRef` came from."""
_ALPHABET = string.digits + string.ascii_lowercase


def _base36(number: int) -> str:
    digits = ""
    while True:
        number, rest = divmod(number, 36)
        digits = _ALPHABET[rest] + digits
        if number == 0:
            return digits


def new_session_id() -> str:
    """`mm-<time in base 36>-<6 random>` like the TypeScript recorder's ids (sortable by time)."""
    suffix = "".join(secrets.choice(_ALPHABET) for _ in range(6))
    return f"mm-{_base36(time.time_ns() // 1_000_000)}-{suffix}"


def _git(cwd: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_SECONDS,
            check=True,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip()


def detect_git(cwd: Path) -> GitInfo | None:
    """Branch, short commit and dirtiness of the repository at `cwd`, or None without one."""
    commit = _git(cwd, "rev-parse", "--short", "HEAD")
    if commit is None:
        return None
    branch = _git(cwd, "rev-parse", "--abbrev-ref", "HEAD")
    status = _git(cwd, "status", "--porcelain", "--untracked-files=no")
    return GitInfo(
        branch=branch if branch and branch != "HEAD" else None,
        commit=commit or None,
        dirty=None if status is None else bool(status),
    )


def begin_session(store: KnowledgeStore, request: StartSessionInput, cwd: Path) -> SessionMetadata:
    """Write the new session's `session.json`; an existing session is never overwritten, and
    a start that fails leaves no folder behind (a folder without `session.json` would be a
    session nobody started)."""
    session_id = request.sessionId or new_session_id()
    metadata = SessionMetadata(
        sessionId=session_id,
        createdAt=now_iso(),
        goal=request.goal,
        flowTags=list(request.flowTags),
        tags=list(request.tags),
        git=detect_git(cwd),
        build=request.build,
        launch=request.launch,
    )
    store.root.mkdir(parents=True, exist_ok=True)
    folder = store.root / session_id
    try:
        folder.mkdir()  # claims the id, even against a concurrent start
    except FileExistsError:
        raise InvalidInput(
            "sessionId", f"session {session_id!r} already exists; omit sessionId for a new one"
        ) from None
    try:
        store.write_session(metadata)
    except BaseException:
        with contextlib.suppress(OSError):
            folder.rmdir()  # still empty: the write removed its temp file
        raise
    log.info("started session %s (flowTags %s)", session_id, metadata.flowTags)
    return metadata


def earlier_refs(store: KnowledgeStore, record: StepRecord) -> dict[str, tuple[str, str]]:
    """What each `a11yRef` the step acted on was in the session's newest earlier snapshot
    holding it, when its own observation does not: `{"a11yRef": "e5"}` typed into whatever
    node `e5` was (a password box is a secret field although the step does not say so), alone
    or as one action of a batch."""
    wanted = unresolved_refs(record)
    found: dict[str, tuple[str, str]] = {}
    if not wanted:
        return found
    for name in reversed(store.step_names(record.sessionId)[-EARLIER_SNAPSHOT_STEPS:]):
        try:
            nodes = store.read_step(record.sessionId, name).observation.a11y.nodes
        except (OSError, ValueError, ValidationError):
            continue  # skipped and reported by the indexer
        if not wanted.isdisjoint(node.ref for node in nodes):
            snapshot = {node.ref: (node.role, node.name) for node in nodes}
            found = snapshot | found  # a newer snapshot's meaning of a ref wins
            wanted -= snapshot.keys()
        if not wanted:
            break
    return found


def write_step(
    store: KnowledgeStore, record: StepRecord, stamp: Callable[[], str] | None = None
) -> tuple[str, StepRecord]:
    """Store a step sent to `mm_knowledge_record_step` (secrets scrubbed, labels derived);
    returns its step id and the record (its time is `stamp`'s, taken as the step is named,
    when given: `KnowledgeStore.record_step`)."""
    record = labelled(scrub_step(record, earlier_refs(store, record)))
    return store.record_step(record, stamp=stamp), record
