"""A step document's payload -> the result row (`StepSummary`) that search and last return."""

from typing import TypedDict

from engine.core import BatchAction, Caution, SourceSession, StepSummary
from engine.index import StepPayload
from engine.query.evidence import snippet
from engine.query.salience import Recalls
from engine.query.superseded_rule import is_superseded, superseded_fields
from engine.records import valid_time


class HitFields(TypedDict, total=False):
    """What a search says of each result row (`StepSummary` fields)."""

    type: str
    similarity: float | None
    matchType: str
    relatedCount: int | None
    confidence: float
    caution: Caution | None


def step_row(
    step_id: str,
    session_id: str,
    payload: StepPayload,
    *,
    score: float | None = None,
    matched_fields: list[str] | None = None,
    session: SourceSession | None = None,
    always_flag: bool = False,
    recalls: Recalls | None = None,
    hit: HitFields | None = None,
) -> StepSummary:
    """The row of one step, with its source session and recalls when given, and on a search
    result what the search said of it (`hit`).

    Lifecycle fields appear on superseded steps (shown on request); with `always_flag` every
    row says `isSuperseded`, as timelines do, since they show history as it was.
    """
    screen = payload.get("screen") or "unknown"
    on_screen = payload.get("onScreen")
    return StepSummary(
        stepId=step_id,
        sessionId=session_id,
        timestamp=valid_time(payload.get("timestamp")) or "",
        tool=payload.get("tool", ""),
        screen=screen,
        onScreen=on_screen if on_screen and on_screen not in (screen, "unknown") else None,
        snippet=snippet(payload, matched_fields or []),
        ok=bool(payload.get("ok")),
        target=payload.get("target"),
        labels=payload.get("labels") or [],
        matchedFields=matched_fields or None,
        sessionGoal=payload.get("goal"),
        score=round(score, 4) if score is not None else None,
        sourceSession=session,
        recallCount=recalls.count if recalls else None,
        batch=[BatchAction(**entry) for entry in payload["batch"]] if "batch" in payload else None,
        context=payload.get("context"),
        salience=recalls.salience if recalls else None,
        **(superseded_fields(payload) if always_flag or is_superseded(payload) else {}),
        **(hit or HitFields()),
    )
