"""A session's recipe: screens in order, what worked, what failed and how it was recovered.

Read straight from the session's files (one folder, not a scan), so a summary is exact even
while the index catches up.
"""

from pathlib import Path

from engine.core import (
    InvalidInput,
    NotFound,
    RecipeAction,
    RecipeFailure,
    SessionRecipe,
    SessionSummary,
    SummarizeInput,
)
from engine.index import SessionContext, resolve_target
from engine.query import scope_session
from engine.records import (
    DISCOVERY_TOOLS,
    REDACTED,
    KnowledgeStore,
    LoadedSession,
    StepRecord,
    scrub_step,
    tool_action,
)

SILENT_TOOLS = DISCOVERY_TOOLS | {"launch", "screenshot", "cleanup"}


def _action(step_id: str, record: StepRecord, context: SessionContext) -> RecipeAction:
    resolved = resolve_target(record, context)
    text = None
    if record.tool.input and isinstance(record.tool.input.get("text"), str):
        text = REDACTED if record.tool.textRedacted else record.tool.input["text"]
    return RecipeAction(
        stepId=step_id,
        tool=record.tool.name,
        screen=context.screen or record.screen,
        target=(resolved.describe() or None) if resolved else None,
        text=text,
    )


def _is_action(record: StepRecord) -> bool:
    return tool_action(record.tool.name) not in SILENT_TOOLS


def session_summary(loaded: LoadedSession) -> SessionSummary:
    meta = loaded.metadata
    return SessionSummary(
        sessionId=loaded.session_id,
        createdAt=meta.createdAt,
        goal=meta.goal,
        flowTags=meta.flowTags,
        tags=meta.tags,
        git=meta.git.model_dump(exclude_none=True) if meta.git else None,
        stepCount=len(loaded.steps),
        failedStepCount=sum(1 for s in loaded.steps if not s.record.outcome.ok),
        hasMetadata=loaded.has_metadata_file,
    )


def summarize_session(loaded: LoadedSession) -> SessionRecipe:
    screens: list[str] = []
    actions: list[RecipeAction] = []
    failures: list[RecipeFailure] = []
    open_failures: list[RecipeFailure] = []
    context = SessionContext()
    for step in loaded.steps:
        record = scrub_step(step.record, context.refs)  # files written by others may hold secrets
        if not screens or screens[-1] != record.screen:
            screens.append(record.screen)
        if _is_action(record):
            action = _action(step.step_id, record, context)
            if record.outcome.ok:
                actions.append(action)
                for failure in open_failures:
                    failure.recoveredBy = action
                open_failures = []
            else:
                error = record.outcome.error
                failure = RecipeFailure(
                    stepId=step.step_id,
                    tool=record.tool.name,
                    screen=action.screen,
                    target=action.target,
                    errorCode=error.code if error else None,
                    errorMessage=error.message if error else None,
                )
                failures.append(failure)
                open_failures.append(failure)
        context.advance(record)
    return SessionRecipe(
        session=session_summary(loaded),
        screens=screens,
        actions=actions,
        failures=failures,
        skipped=[{"path": s.path, "reason": s.reason} for s in loaded.skipped],
    )


def summarize(root: Path, request: SummarizeInput, current_session: str | None) -> SessionRecipe:
    """The recipe of the session a request names (legacy `sessionId` wins over `scope`)."""
    if request.sessionId:
        session_id = request.sessionId
    elif request.scope == "all":
        raise InvalidInput(
            "scope", "summarize needs one session: use 'current' or {'sessionId': …}"
        )
    else:
        session_id = scope_session(request.scope, current_session) or ""
    if not (root / session_id).is_dir():
        raise NotFound(
            f"no session {session_id!r} under {root}; list the sessions to see which exist"
        )
    return summarize_session(KnowledgeStore(root).load_session(session_id))
