"""Validated inputs of the recording and status tools (the knowledge tools use engine.core.inputs).

`RecordStepInput` is a StepRecord whose `sessionId` and `timestamp` may be left to the server;
like every record it keeps fields it does not know (`timing`, `environment`, …) so recorders
can send their records verbatim. The other inputs reject unknown keys.
"""

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from engine import (
    InvalidInput,
    Observation,
    Outcome,
    Record,
    SessionId,
    StepRecord,
    Strict,
    ToolCall,
    check_record,
    parse_time,
)

Tag = Annotated[str, Field(min_length=1, max_length=64)]


class WithinLimits(BaseModel):
    """Arguments that are recorded: within `engine.records.limits`, checked as sent, before anything
    else (an integer beyond 64 bits cannot be written, a huge text would slow every search)."""

    @model_validator(mode="before")
    @classmethod
    def _within_limits(cls, data: Any) -> Any:
        check_record(data)
        return data


class StartSessionInput(WithinLimits, Strict):
    goal: Annotated[str, Field(min_length=1, max_length=500)] | None = None
    flowTags: Annotated[list[Tag], Field(max_length=20)] = Field(default_factory=list)
    tags: Annotated[list[Tag], Field(max_length=20)] = Field(default_factory=list)
    sessionId: SessionId | None = None
    build: dict[str, Any] | None = None
    launch: dict[str, Any] | None = None


class RecordStepInput(WithinLimits, Record):
    model_config = ConfigDict(extra="allow", frozen=True)

    sessionId: SessionId | None = None
    timestamp: str | None = None
    schemaVersion: Literal[1] = 1
    tool: ToolCall
    outcome: Outcome
    observation: Observation = Field(default_factory=Observation)
    labels: list[str] | None = None

    @field_validator("timestamp")
    @classmethod
    def _iso_time(cls, value: str | None) -> str | None:
        if value is not None and parse_time(value) is None:
            raise ValueError("must be an ISO-8601 time such as 2026-01-15T12:00:00.000Z")
        return value

    @field_validator("outcome", mode="before")
    @classmethod
    def _strict_ok(cls, value: Any) -> Any:
        """`ok` is a JSON boolean: "yes" or 1 must not pass for a success."""
        if isinstance(value, dict) and "ok" in value and not isinstance(value["ok"], bool):
            raise InvalidInput("outcome.ok", "must be true or false")
        return value

    @field_validator("tool")
    @classmethod
    def _named(cls, value: ToolCall) -> ToolCall:
        if not value.name or len(value.name) > 128:
            raise ValueError("tool.name must be 1-128 characters")
        return value

    def to_record(self, session_id: str, timestamp: str) -> StepRecord:
        """The StepRecord to store, with the session and time the caller left out filled in."""
        data = self.model_dump(mode="json", exclude_none=True)
        data["sessionId"] = self.sessionId or session_id
        data["timestamp"] = self.timestamp or timestamp
        return StepRecord.model_validate(data)


class StatusInput(Strict):
    """No arguments."""
