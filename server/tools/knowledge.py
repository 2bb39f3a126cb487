"""The knowledge tools: search, read, curate and record what agents learned.

Each handler validates its arguments (an `InvalidInput` naming the field), makes one engine
call on a worker thread and returns a typed result; `server.app` wraps it in the envelope.
Descriptions are written for the agent: when to use the tool, with an example call.
"""

from functools import partial
from typing import Any

from engine import (
    ClusterInput,
    ClusterList,
    DuplicateList,
    DuplicatesInput,
    IndexStatus,
    LastInput,
    NoActiveSession,
    NotFound,
    Result,
    SearchInput,
    SearchPage,
    SessionList,
    SessionRecipe,
    SessionsInput,
    StepContext,
    StepInput,
    StepList,
    SummarizeInput,
    Superseded,
    SupersedeInput,
    TimelineInput,
    TimelineResult,
    from_the_future,
    now_iso,
    result_offers,
    session_dir,
    supersede_step,
    validate,
    with_recalls,
)
from server import schemas
from server.inputs import RecordStepInput, StartSessionInput, StatusInput
from server.recording import begin_session, write_step
from server.state import ServerState
from server.tools.spec import ToolSpec


class SessionStarted(Result):
    sessionId: str
    session: dict[str, Any]


class StepRecorded(Result):
    stepId: str
    sessionId: str
    labels: list[str]
    textRedacted: bool = False


async def search(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(SearchInput, args)
    session = state.current_session
    page = await state.query(partial(state.engine.search, request, current_session=session))
    if session is not None:  # remembered in memory only: a search writes nothing
        state.offers.offer(session, result_offers(page.steps()))
    return page


async def last(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(LastInput, args)
    return await state.query(
        partial(state.engine.last, request, current_session=state.current_session)
    )


async def summarize(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(SummarizeInput, args)
    return await state.query(
        partial(state.engine.summarize, request, current_session=state.current_session)
    )


async def sessions(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(SessionsInput, args)
    return await state.query(partial(state.engine.sessions, request))


async def timeline(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(TimelineInput, args)
    return await state.query(partial(state.engine.timeline, request))


async def session_context(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(StepInput, args)
    return await state.query(partial(state.engine.step_context, request))


async def find_duplicates(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(DuplicatesInput, args)
    return await state.query(partial(state.engine.find_duplicates, request))


async def cluster(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(ClusterInput, args)
    return await state.query(partial(state.engine.cluster, request))


async def supersede(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(SupersedeInput, args)
    return await state.write(partial(supersede_step, state.store, request))


async def start_session(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(StartSessionInput, args)
    metadata = await state.write(partial(begin_session, state.store, request, state.cwd))
    state.current_session = metadata.sessionId
    return SessionStarted(
        sessionId=metadata.sessionId, session=metadata.model_dump(mode="json", exclude_none=True)
    )


async def record_step(state: ServerState, args: dict[str, Any]) -> Result:
    request = validate(RecordStepInput, args)
    session_id = request.sessionId or state.current_session
    start = f"{state.settings.tool_prefix}knowledge_start_session"
    if session_id is None and state.conversation.forgotten:
        raise NoActiveSession(
            "this server no longer remembers the session this client started (more than "
            f"{state.conversations.limit:,} other clients were active since): pass sessionId"
        )
    if session_id is None:
        raise NoActiveSession(f"no current session: call {start} first, or pass sessionId")
    if not session_dir(state.store.root, session_id).is_dir():
        # A mistyped id must not start a session folder without session.json.
        raise NotFound(
            f"sessionId: no session {session_id!r}; start one with {start} (it returns the "
            "sessionId to record into) or pass the id of an existing session"
        )
    record = with_recalls(request.to_record(session_id, now_iso()), state.offers)
    # Without a time of its own (or with one from the future, which is not believed), the step
    # is stamped as it is named: numbers follow times even when several servers record into the
    # session at once.
    believed = request.timestamp and not from_the_future(request.timestamp)
    stamp = None if believed else now_iso
    step_id, record = await state.write(partial(write_step, state.store, record, stamp))
    return StepRecorded(
        stepId=step_id,
        sessionId=session_id,
        labels=record.labels or [],
        textRedacted=bool(record.tool.textRedacted),
    )


async def status(state: ServerState, args: dict[str, Any]) -> Result:
    validate(StatusInput, args)
    return await state.status()


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "knowledge_search",
        "Search prior knowledge",
        "Search what earlier agents did, across all sessions by default: steps (tool, screen, "
        "target, outcome) best first, with match evidence. Use it before exploring a screen or "
        'flow, e.g. {"query": "swap button", "filters": {"flowTag": "swap"}}; page with offset '
        "while hasMore.",
        schemas.SEARCH,
        search,
        SearchPage,
    ),
    ToolSpec(
        "knowledge_last",
        "Last steps",
        "The last n steps, oldest first, of the current session (default) or of any scope. Use "
        "it to recall what just happened, e.g. after an error; every session's last failures: "
        '{"n": 5, "scope": "all", "filters": {"ok": false}}.',
        schemas.LAST,
        last,
        StepList,
    ),
    ToolSpec(
        "knowledge_summarize",
        "Summarize a session",
        "A session's recipe: screens visited, actions that worked, failures and how they were "
        "recovered. Use it on a session found with {prefix}knowledge_sessions, e.g. "
        '{"scope": {"sessionId": "mm-mlfgj375-eoid2h"}}; a long session comes 200 steps at a '
        "time (pass its nextOffset back as offset until an answer has none).",
        schemas.SUMMARIZE,
        summarize,
        SessionRecipe,
    ),
    ToolSpec(
        "knowledge_sessions",
        "List sessions",
        "Recent sessions, newest first, with goal, flowTags, tags, git branch and step counts. "
        'Use it to find an earlier run of your flow, e.g. {"filters": {"flowTag": "swap"}}.',
        schemas.SESSIONS,
        sessions,
        SessionList,
    ),
    ToolSpec(
        "knowledge_timeline",
        "Steps around a step",
        "What happened before and after a step: its session's neighbouring steps in order "
        "(scope session) or every session's by time (scope all), with each session's goal, "
        "flowTags and length. Use it on a step id from a search result, for example "
        '{"anchor": "mm-mlfgj375-eoid2h/0051-mm_click", "before": 3, "after": 3}, or on the '
        'best hit of a query: {"query": "confirm send"}.',
        schemas.TIMELINE,
        timeline,
        TimelineResult,
    ),
    ToolSpec(
        "knowledge_session_context",
        "Where a step came from",
        "The session a step was recorded in (goal, flowTags, createdAt, stepCount) and how it "
        "was used since: created, or recalled by later sessions that followed it and "
        "succeeded. Use it to judge a search result, for example "
        '{"stepId": "mm-mlfgj375-eoid2h/0051-mm_click"}.',
        schemas.SESSION_CONTEXT,
        session_context,
        StepContext,
    ),
    ToolSpec(
        "knowledge_supersede",
        "Mark a step superseded",
        "Mark a step that no longer works as recorded (the UI changed) so that search, last and "
        "priorKnowledge stop offering it: by the newer step that works instead, or with a "
        "reason. Use it when a remembered target is gone, for example "
        '{"stepId": "mm-mlfgj375-eoid2h/0022-mm_click", "reason": "the button moved"}; the '
        "decision is stored in the session's superseded.json.",
        schemas.SUPERSEDE,
        supersede,
        Superseded,
        read_only=False,
    ),
    ToolSpec(
        "knowledge_find_duplicates",
        "Find duplicate memories",
        "Groups of near-identical memories (steps, screen observations, sessions) with their "
        "counts, texts and example ids, largest first; texts naming different identifiers "
        "(token-1, token-2) never share a group. Use it to see what agents keep repeating, e.g. "
        '{"types": ["step"], "similarityThreshold": 0.95, "filters": {"flowTag": "swap"}}.',
        schemas.FIND_DUPLICATES,
        find_duplicates,
        DuplicateList,
    ),
    ToolSpec(
        "knowledge_cluster",
        "Cluster memories",
        "Groups one type of memory into k clusters by meaning, each with its size, top terms "
        "and example ids (the same index always gives the same clusters). Use it to discover "
        'common patterns, e.g. {"type": "step", "nClusters": 5}.',
        schemas.CLUSTER,
        cluster,
        ClusterList,
    ),
    ToolSpec(
        "knowledge_start_session",
        "Start a recorded session",
        "Start recording a session (goal, flowTags, tags) and make it your current session (over "
        "HTTP each client has its own). Call it once at the start of a run when your harness "
        "drives the browser itself.",
        schemas.START_SESSION,
        start_session,
        SessionStarted,
        read_only=False,
    ),
    ToolSpec(
        "knowledge_record_step",
        "Record a step",
        "Record one step you performed (tool, target, outcome, observation) in the current "
        "session; every agent can search it within a second. Text typed into password or "
        "recovery-phrase fields is stored as [REDACTED].",
        schemas.RECORD_STEP,
        record_step,
        StepRecorded,
        read_only=False,
    ),
    ToolSpec(
        "knowledge_status",
        "Index status",
        "Health of the knowledge index: documents indexed, sessions, files skipped and why, "
        "index lag, and whether this process writes the index. Use it when results look "
        "missing or stale.",
        schemas.STATUS,
        status,
        IndexStatus,
    ),
)
