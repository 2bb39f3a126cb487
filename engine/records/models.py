"""pydantic records of the knowledge root: `session.json` (SessionMetadata v1) and step files.

Field names follow the JSON on disk (camelCase) so records round-trip unchanged. Records keep
unknown fields (`extra="allow"`): newer recorders may add data we do not know yet, and old
records without `labels` or sessions without `session.json` still load.
"""

from datetime import UTC, datetime
from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    model_config = ConfigDict(extra="allow")


class GitInfo(Record):
    branch: str | None = None
    commit: str | None = None
    dirty: bool | None = None


class SessionMetadata(Record):
    """IMPROVEMENT-01 §4.1."""

    schemaVersion: int = 1
    sessionId: str
    createdAt: str
    goal: str | None = None
    flowTags: list[str] = Field(default_factory=list)
    tags: list[str] = Field(default_factory=list)
    git: GitInfo | None = None
    build: dict[str, Any] | None = None
    launch: dict[str, Any] | None = None
    """How today's recorder launched the wallet: `stateMode` (default, onboarding, custom),
    `fixturePreset`, `extensionPath`, `ports`."""

    def launched(self, key: str) -> str | None:
        """A `launch` value that is text (`stateMode`, `fixturePreset`), else None."""
        value = (self.launch or {}).get(key)
        return value if isinstance(value, str) and value else None


class A11yHint(Record):
    """The role and accessible name of an element: what survives a testId rename."""

    role: str
    name: str


class StepTarget(Record):
    testId: str | None = None
    selector: str | None = None
    a11yRef: str | None = None
    a11yHint: A11yHint | None = None
    """Recorded by knowhow's browser tools: the target's role and name at the time of the action."""


class ToolCall(Record):
    name: str
    input: dict[str, Any] | None = None
    target: StepTarget | None = None
    textRedacted: bool | None = None
    textLength: Annotated[int, Field(ge=0, strict=True)] | None = None


class StepError(Record):
    code: str | None = None
    message: str | None = None


class Outcome(Record):
    ok: bool
    error: StepError | None = None


class ScreenState(Record):
    currentScreen: str | None = None
    currentUrl: str | None = None


class TestIdItem(Record):
    testId: str
    tag: str | None = None
    text: str | None = None
    visible: bool | None = None


class A11yNode(Record):
    ref: str
    role: str = ""
    name: str = ""
    path: list[str] = Field(default_factory=list)


class A11ySnapshot(Record):
    nodes: list[A11yNode] = Field(default_factory=list)


class Observation(Record):
    state: ScreenState = Field(default_factory=ScreenState)
    testIds: list[TestIdItem] = Field(default_factory=list)
    a11y: A11ySnapshot = Field(default_factory=A11ySnapshot)
    priorKnowledge: dict[str, Any] | None = None


class RecallLink(Record):
    """This step followed a memory an earlier session recorded, offered by `via`."""

    stepId: str
    via: str
    """`search` or `priorKnowledge`."""


class StepRecord(Record):
    schemaVersion: int = 1
    timestamp: str
    sessionId: str
    tool: ToolCall
    outcome: Outcome
    observation: Observation = Field(default_factory=Observation)
    labels: list[str] | None = None
    recalled: list[RecallLink] | None = None
    """Memories this action followed, when it worked (read by `engine.history.session_context`)."""

    @property
    def context(self) -> str | None:
        """`e2e` or `prod`: what today's recorder ran the step against (None when the record
        does not say; kept as an unknown field, so a record with an odd value still loads)."""
        value = (self.model_extra or {}).get("context")
        return value if isinstance(value, str) else None

    @property
    def screen(self) -> str:
        return self.observation.state.currentScreen or "unknown"


class SupersededBy(Record):
    """The newer step that works where a superseded one no longer does."""

    stepId: str
    target: str | None = None
    timestamp: str | None = None


class Supersession(Record):
    """One entry of a session's `superseded.json`: why a step of it is no longer true.

    `source` is `detected` (written by the indexer from evidence, replaced on every re-plan)
    or `explicit` (`mm_knowledge_supersede`; detection never overwrites it).
    """

    supersededBy: SupersededBy | None = None
    supersededAt: str
    source: str = "detected"
    evidence: str | None = None
    reason: str | None = None


class Supersessions(Record):
    """`<sessionId>/superseded.json`: step file stem -> supersession."""

    schemaVersion: int = 1
    steps: dict[str, Supersession] = Field(default_factory=dict)


def parse_time(value: str | None) -> datetime | None:
    """ISO-8601 (with `Z`) to an aware datetime; None when absent or unreadable."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


MAX_TIME_CHARS = 40
"""Longer than any ISO-8601 time (`2026-01-15T12:00:00.000000+05:30` is 32)."""


def valid_time(value: str | None) -> str | None:
    """A recorded time as it was written, when it is one (ISO-8601 and at most
    `MAX_TIME_CHARS`); None for anything else. A timestamp read from a file written by another
    program can be any text: only a time is ever shown as one."""
    if not value or len(value) > MAX_TIME_CHARS or parse_time(value) is None:
        return None
    return value


DAY_MS = 86_400_000
"""A day in milliseconds: ages in days (salience, priorKnowledge) from epoch-ms times."""


@lru_cache(maxsize=64)
def epoch_ms(value: str | None) -> int:
    """Milliseconds since the epoch, 0 when the time is unknown (sorts last in newest-first).
    (Cached for the last few values: a step's analysis asks for its time more than once.)"""
    parsed = parse_time(value)
    return int(parsed.timestamp() * 1000) if parsed else 0


MAX_AHEAD_MS = 5 * 60 * 1000
"""How far ahead of this machine's clock a recorded time is still believed (clocks of two
machines disagree by seconds, not minutes)."""


def from_the_future(value: str | None, now_ms: int | None = None) -> bool:
    """Whether a recorded time is later than now (`now_ms`, default this clock) by more than
    `MAX_AHEAD_MS`. Such a time is a claim, not evidence: nothing has happened after it yet, so
    it must not make a step the newest of everything (recording stores the receive time
    instead; supersede detection does not read it)."""
    return epoch_ms(value) > (now_ms if now_ms is not None else current_ms()) + MAX_AHEAD_MS


def current_ms() -> int:
    """This clock, in epoch milliseconds."""
    return int(datetime.now(UTC).timestamp() * 1000)


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
