"""A session's recipe: screens in order, what worked, what failed and how it was recovered.

Read straight from the session's files (one folder, not a scan), so a summary is exact even
while the index catches up.
"""

from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path

from engine.core import (
    ONE_SESSION,
    InvalidInput,
    NotFound,
    RecipeAction,
    RecipeFailure,
    SessionRecipe,
    SessionSummary,
    SummarizeInput,
)
from engine.history.timed_order import timed_orders
from engine.index import (
    SessionContext,
    analyse_batch,
    effective_screen,
    resolve_target,
)
from engine.query import scope_session
from engine.records import (
    DISCOVERY_TOOLS,
    READING_TOOLS,
    REDACTED,
    UNKNOWN,
    Batch,
    KnowledgeStore,
    LoadedSession,
    StepRecord,
    name_order,
    read_batch,
    step_id_for,
    tool_action,
)

SILENT_TOOLS = DISCOVERY_TOOLS | READING_TOOLS | {"launch", "screenshot", "cleanup"}
"""Tools that only look or read: a recipe leaves them out (set-up tools stay: a recipe must
set the test up as the session did)."""
SUMMARY_STEPS = 200
"""Steps a summary covers at most: a longer session is summarized a page at a time."""
PAGE_ACTIONS = 1_000
"""Actions (each action of a batch counts) a summary page lists at most."""
PAGE_BYTES = 256_000
"""About how many bytes of actions a summary page holds at most."""
ACTION_OVERHEAD_BYTES = 80
"""An action's field names and punctuation in the answer, besides its strings."""
CONTEXT_STEPS = 30
"""Steps read before a page to set its scene (the screen and the refs its first steps used)."""
STOPPED_NOTE = (
    "worked up to an unknown step: the batch stopped at its first failure and its record does "
    "not say which step that was; the steps after it never ran"
)
FAILED_NOTE = (
    "every step of the batch ran and at least one failed; which is unknown: its record does not say"
)


def _action(step_id: str, record: StepRecord, context: SessionContext) -> RecipeAction:
    resolved = resolve_target(record, context)
    return RecipeAction(
        stepId=step_id,
        tool=record.tool.name,
        screen=context.screen or record.screen,
        target=(resolved.describe() or None) if resolved else None,
        text=_typed(record),
    )


def _typed(record: StepRecord) -> str | None:
    if record.tool.input and isinstance(record.tool.input.get("text"), str):
        return REDACTED if record.tool.textRedacted else record.tool.input["text"]
    return None


def _batch_actions(
    step_id: str, record: StepRecord, batch: Batch, context: SessionContext
) -> list[RecipeAction]:
    """A batch's actions, each as the recipe step it is, with its position in the batch."""
    analysed = analyse_batch(
        record,
        batch,
        lambda r: resolve_target(r, context),
        context.screen,
        effective_screen(record),
    )
    return [
        RecipeAction(
            stepId=step_id,
            tool=a.record.tool.name,
            screen=a.screen or UNKNOWN,
            target=(a.target.describe() or None) if a.target else None,
            text=_typed(a.record),
            batchIndex=a.index,
        )
        for a in analysed
        if tool_action(a.record.tool.name) not in SILENT_TOOLS
    ]


def _failure(
    step_id: str, record: StepRecord, made: list[RecipeAction], batch: Batch | None, screen: str
) -> RecipeFailure:
    """A failed step; a failed batch with its actions and what its record cannot say (a batch
    of one action failed in that action)."""
    error = record.outcome.error
    single = batch is None or len(batch.actions) == 1
    one = made[0] if single and len(made) == 1 else None
    note = None
    if batch is not None and one is None:
        note = STOPPED_NOTE if batch.stop_on_error else FAILED_NOTE
    return RecipeFailure(
        stepId=step_id,
        tool=one.tool if one else record.tool.name,
        screen=one.screen if one else screen,
        target=one.target if one else None,
        errorCode=error.code if error else None,
        errorMessage=error.message if error else None,
        batch=made if batch is not None else None,
        note=note,
    )


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
        stateMode=meta.launched("stateMode"),
        fixturePreset=meta.launched("fixturePreset"),
    )


@dataclass
class PageBudget:
    """What one summary page may still list: actions (each of a batch's counts) and about how
    many bytes of answer they make (their strings, and a field's overhead each)."""

    actions: int = PAGE_ACTIONS
    bytes: int = PAGE_BYTES

    def spend(self, made: list[RecipeAction], failure: RecipeFailure | None) -> None:
        listed = [*made, *(failure.batch or [] if failure else [])]
        self.actions -= len(listed)
        self.bytes -= sum(_answer_bytes(a) for a in listed)
        if failure is not None:
            self.bytes -= len(failure.errorMessage or "") + len(failure.note or "") + 200

    @property
    def spent(self) -> bool:
        return self.actions <= 0 or self.bytes <= 0


def _answer_bytes(action: RecipeAction) -> int:
    strings = (action.stepId, action.tool, action.screen, action.target, action.text)
    return ACTION_OVERHEAD_BYTES + sum(len(s or "") for s in strings)


def summarize_session(loaded: LoadedSession, before: Collection[str] = ()) -> SessionRecipe:
    """The recipe of the steps `loaded` holds; those in `before` (step ids of the steps before
    a page) only set the scene: what was on screen and which refs meant what."""
    return _recipe(loaded, before, None)[0]


def _recipe(
    loaded: LoadedSession, before: Collection[str], budget: PageBudget | None
) -> tuple[SessionRecipe, int | None]:
    """`summarize_session`, ending after the step that spends `budget` (when given); with the
    number of steps after `before` it covered when it ended early (None: it covered all)."""
    screens: list[str] = []
    actions: list[RecipeAction] = []
    failures: list[RecipeFailure] = []
    open_failures: list[RecipeFailure] = []
    context = SessionContext()
    covered: int | None = None
    page_steps = 0
    for step in loaded.steps:
        if budget is not None and budget.spent:
            covered = page_steps
            break
        record = context.see(step.record)
        if step.step_id in before:
            context.advance(record)
            continue
        page_steps += 1
        if not screens or screens[-1] != record.screen:
            screens.append(record.screen)
        batch = read_batch(record)
        if batch is not None:
            made = _batch_actions(step.step_id, record, batch, context)
        elif tool_action(record.tool.name) not in SILENT_TOOLS:
            made = [_action(step.step_id, record, context)]
        else:
            made = []
        failure = None
        if made and record.outcome.ok:
            actions += made
            for open_failure in open_failures:
                open_failure.recoveredBy = made[0]
            open_failures = []
        elif (made or batch is not None) and not record.outcome.ok:
            screen = context.screen or record.screen
            failure = _failure(step.step_id, record, made, batch, screen)
            failures.append(failure)
            open_failures.append(failure)
        if budget is not None:
            budget.spend(made if failure is None else [], failure)
        context.advance(record)
    recipe = SessionRecipe(
        session=session_summary(loaded),
        screens=screens,
        actions=actions,
        failures=failures,
        skipped=[{"path": s.path, "reason": s.reason} for s in loaded.skipped],
        warnings=[{"path": s.path, "reason": s.reason} for s in loaded.warnings],
    )
    return recipe, covered


def summarize(
    root: Path,
    request: SummarizeInput,
    current_session: str | None,
    failed_steps: Callable[[str], int],
) -> SessionRecipe:
    """The recipe of the session a request names (legacy `sessionId` wins over `scope`), a
    page of `SUMMARY_STEPS` steps from `request.offset` (`summarize_page`)."""
    if request.sessionId:
        session_id = request.sessionId
    elif request.scope == "all":
        raise InvalidInput("scope", f'summarize needs one session: "current" or {ONE_SESSION}')
    else:
        session_id = scope_session(request.scope, current_session) or ""
    if not (root / session_id).is_dir():
        raise NotFound(
            f"no session {session_id!r} under {root}; list the sessions to see which exist"
        )
    return summarize_page(KnowledgeStore(root), session_id, request.offset, failed_steps)


def summarize_page(
    store: KnowledgeStore, session_id: str, offset: int, failed_steps: Callable[[str], int]
) -> SessionRecipe:
    """A session of at most `SUMMARY_STEPS` steps whose recipe fits one page is read whole, as
    always. Any other is summarized a page at a time, so that an answer never grows with its
    session: a page covers `SUMMARY_STEPS` steps, fewer when their actions would list more than
    `PAGE_ACTIONS` (a batch's each) or make more than about `PAGE_BYTES` (a page always
    covers at least one step). The page's steps and the `CONTEXT_STEPS` before them are read
    (in the order their names give; a session whose names do not tell it is read whole to
    order it, once while its files are unchanged: `timed_orders`), its `stepCount` is its
    number of step files, and `failedStepCount` is counted by the index (`failed_steps`)."""
    names = store.step_names(session_id)
    if offset == 0 and len(names) <= SUMMARY_STEPS:
        whole, covered = _recipe(store.load_session(session_id), (), PageBudget())
        if covered is None:
            return whole
    ordered = name_order(names)
    if ordered is None:
        ordered = timed_orders.order(store, session_id)
    page = ordered[offset : offset + SUMMARY_STEPS]
    before = ordered[max(0, offset - CONTEXT_STEPS) : offset]
    loaded = store.load_session(session_id, only=[*before, *page])
    before_ids = {step_id_for(session_id, name) for name in before}
    recipe, covered = _recipe(loaded, before_ids, PageBudget())
    summary = recipe.session.model_copy(
        update={"stepCount": len(ordered), "failedStepCount": failed_steps(session_id)}
    )
    following = offset + (len(page) if covered is None else covered)
    return recipe.model_copy(
        update={
            "session": summary,
            "offset": offset,
            "truncated": True,
            "nextOffset": following if following < len(ordered) else None,
        }
    )
