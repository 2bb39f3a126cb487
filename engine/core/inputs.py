"""Validated inputs of the knowledge operations (IMPROVEMENT-01 §5), shared by CLI and MCP.

Limits are exactly the spec's (query 1..200 chars, limit 1..100, n 1..200, sinceHours 1..720,
sessions limit 1..50); additive: `offset`, and the filters `ok`, `tool`, `after`, `before`.
Unknown keys are rejected. `validate` turns any violation into one `InvalidInput` naming the field.
"""

from datetime import datetime
from typing import Annotated, Literal, TypeVar

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from engine.core.errors import InvalidInput
from engine.core.files import validate_session_id, validate_step_id

MAX_OFFSET = 10_000
MAX_STEP_OFFSET = 100_000_000
"""Where in a session a page of its recipe may start (summarize)."""


def _safe_session_id(value: str) -> str:
    """Ids that could leave the knowledge root fail validation (pydantic names the field)."""
    try:
        return validate_session_id(value)
    except InvalidInput as exc:
        raise ValueError(exc.message.split(": ", 1)[-1]) from None


SessionId = Annotated[str, Field(min_length=4, max_length=128), AfterValidator(_safe_session_id)]
"""A session id field of any input model: one that cannot leave the knowledge root."""


def _has_words(value: str) -> str:
    if not value.strip():
        raise ValueError("must contain something to search for, not only spaces")
    return value


Query = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_has_words)]
"""Search text: 1..200 characters, not all of them whitespace (rejected like "")."""


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SessionScope(Strict):
    sessionId: SessionId


ONE_SESSION = '{"sessionId": "…"}'
"""How a scope names one session, as an agent can copy it into its next call."""


def _session_named_alone(value: object) -> object:
    """A session id sent where a scope belongs (`"scope": "mm-…"`, what the CLI's --scope
    takes): say how the tools spell it, with that id when it is one."""
    if not isinstance(value, str) or value in ("current", "all"):
        return value
    try:
        spelled = ONE_SESSION.replace("…", validate_session_id(value))
    except InvalidInput:
        spelled = ONE_SESSION
    raise ValueError(f'is neither "current" nor "all"; one session is {spelled}')


Scope = Annotated[Literal["current", "all"] | SessionScope, BeforeValidator(_session_named_alone)]


class KnowledgeFilters(Strict):
    flowTag: Annotated[str, Field(min_length=1)] | None = None
    tag: Annotated[str, Field(min_length=1)] | None = None
    screen: Annotated[str, Field(min_length=1)] | None = None
    sinceHours: Annotated[int, Field(ge=1, le=720, strict=True)] | None = None
    gitBranch: Annotated[str, Field(min_length=1)] | None = None
    ok: Annotated[bool, Field(strict=True)] | None = Field(
        default=None, description="Only successful (true) or failed (false) steps"
    )
    tool: Annotated[str, Field(min_length=1)] | None = Field(
        default=None,
        description="Only this tool, with or without its prefix (click = mm_click); a batch "
        "(run_steps) counts as each of its actions' tools",
    )
    after: datetime | None = Field(default=None, description="Steps at or after this ISO time")
    before: datetime | None = Field(default=None, description="Steps before this ISO time")
    context: Literal["e2e", "prod"] | None = Field(
        default=None, description="Only steps recorded against this context (today's recorder)"
    )
    stateMode: Literal["default", "onboarding", "custom"] | None = Field(
        default=None, description="Only sessions launched in this state mode"
    )
    fixturePreset: Annotated[str, Field(min_length=1)] | None = Field(
        default=None, description="Only sessions launched with this fixture preset"
    )


SearchMode = Literal["hybrid", "keyword", "semantic"]
MemoryKind = Literal["step", "screen", "session"]
"""Spec 004's memory types: action steps, screen observations, sessions
(`engine.meaning.memories_by_text`)."""


class SearchInput(Strict):
    query: Query
    limit: Annotated[int, Field(ge=1, le=100, strict=True)] = 20
    offset: Annotated[int, Field(ge=0, le=MAX_OFFSET, strict=True)] = 0
    scope: Scope = "all"
    filters: KnowledgeFilters | None = None
    includeSuperseded: bool = False
    minSalience: Annotated[float, Field(ge=0, le=1, strict=True)] = 0.0
    """Only steps at least this salient (recalled by later sessions; see engine.query.salience)."""
    mode: SearchMode = Field(
        default="hybrid", description="hybrid (words and meaning), keyword or semantic"
    )
    minSimilarity: Annotated[float, Field(ge=0, le=1, strict=True)] | None = Field(
        default=None, description="Lowest cosine a semantic hit needs (never drops keyword hits)"
    )
    types: Annotated[list[MemoryKind], Field(min_length=1, max_length=2)] | None = Field(
        default=None,
        description="step (actions) and/or screen (observations), default both; or session "
        "alone (workflows, ranked by their best matching step)",
    )

    @model_validator(mode="after")
    def _sessions_alone(self) -> "SearchInput":
        """Sessions rank by their best step: a list mixing them with steps would hold each
        matching step twice over (once as itself, once as its session)."""
        if self.types and "session" in self.types and len(self.types) > 1:
            raise InvalidInput("types", '"session" is searched alone: types: ["session"]')
        return self


class LastInput(Strict):
    n: Annotated[int, Field(ge=1, le=200, strict=True)] = 20
    scope: Scope = "current"
    filters: KnowledgeFilters | None = None
    includeSuperseded: bool = False


class SummarizeInput(Strict):
    sessionId: Annotated[SessionId, Field(description="Deprecated: use scope")] | None = None
    scope: Scope = "current"
    offset: Annotated[int, Field(ge=0, le=MAX_STEP_OFFSET, strict=True)] = 0
    """The first step of the page (a long session is summarized a page at a time)."""


class SessionsInput(Strict):
    limit: Annotated[int, Field(ge=1, le=50, strict=True)] = 10
    filters: KnowledgeFilters | None = None


def _safe_step_id(value: str) -> str:
    try:
        return validate_step_id(value)
    except InvalidInput as exc:
        raise ValueError(exc.message.split(": ", 1)[-1]) from None


StepId = Annotated[str, Field(min_length=6, max_length=330)]
MAX_TIMELINE_DEPTH = 50


class TimelineInput(Strict):
    """An anchor step (or a query whose best hit becomes the anchor) and its neighbours."""

    anchor: StepId | None = None
    query: Query | None = None
    before: Annotated[int, Field(ge=0, le=MAX_TIMELINE_DEPTH, strict=True)] = 5
    after: Annotated[int, Field(ge=0, le=MAX_TIMELINE_DEPTH, strict=True)] = 5
    scope: Literal["session", "all"] = "session"

    @field_validator("anchor")
    @classmethod
    def _safe(cls, value: str | None) -> str | None:
        return None if value is None else _safe_step_id(value)

    @model_validator(mode="after")
    def _one_anchor(self) -> "TimelineInput":
        if (self.anchor is None) == (self.query is None):
            raise InvalidInput("anchor", "give exactly one of anchor (a step id) or query")
        return self


class StepInput(Strict):
    stepId: StepId

    @field_validator("stepId")
    @classmethod
    def _safe(cls, value: str) -> str:
        return _safe_step_id(value)


class SupersedeInput(StepInput):
    """Mark a step superseded by hand: by a newer step, or for a reason (or both)."""

    supersededBy: StepId | None = None
    reason: Annotated[str, Field(min_length=1, max_length=500)] | None = None

    @field_validator("supersededBy")
    @classmethod
    def _safe_by(cls, value: str | None) -> str | None:
        return None if value is None else _safe_step_id(value)

    @model_validator(mode="after")
    def _by_or_reason(self) -> "SupersedeInput":
        if self.supersededBy is None and self.reason is None:
            raise InvalidInput("supersededBy", "give supersededBy (a step id) or a reason")
        return self


Threshold = Annotated[float, Field(ge=0, le=1, strict=True)]


class DuplicatesInput(Strict):
    """Groups of near-identical memories (spec 004 `memory_find_duplicates`)."""

    similarityThreshold: Threshold = 0.95
    types: Annotated[list[MemoryKind], Field(min_length=1, max_length=3)] | None = None
    filters: KnowledgeFilters | None = None
    includeSuperseded: bool = False
    limit: Annotated[int, Field(ge=1, le=100, strict=True)] = 20


class ClusterInput(Strict):
    """k clusters of one type of memory (spec 004 `memory_cluster`)."""

    type: MemoryKind = "step"
    nClusters: Annotated[int, Field(ge=2, le=50, strict=True)] = 5
    filters: KnowledgeFilters | None = None
    includeSuperseded: bool = False


M = TypeVar("M", bound=BaseModel)


def validate(model: type[M], data: object) -> M:
    """Validate `data` as `model`, raising `InvalidInput` that names the first bad field."""
    try:
        return model.model_validate(data)
    except InvalidInput:
        raise
    except ValidationError as exc:
        # In a union (scope: "current" | "all" | {sessionId}) pydantic reports every branch;
        # the deepest location is the one that says what is wrong with what was sent.
        errors = [(_field_path(e["loc"]), _said(e["type"], e["msg"])) for e in exc.errors()]
        field, message = max(errors, key=lambda e: e[0].count("."))
        raise InvalidInput(field or "input", message) from None


def _said(kind: str, message: str) -> str:
    """pydantic's message, in the words of the JSON an agent sent (an object field's message
    would name the model class that reads it)."""
    if kind in ("model_type", "dict_type"):
        return "Input should be a JSON object"
    return message.removeprefix("Value error, ")


def _field_path(loc: tuple[int | str, ...]) -> str:
    """`('scope', 'SessionScope', 'sessionId')` -> `scope.sessionId` (union branch tags dropped)."""
    parts = [str(p) for p in loc]
    return ".".join(
        p
        for p in parts
        if p not in ("SessionScope", "str") and not p.startswith(("function-", "literal["))
    )
