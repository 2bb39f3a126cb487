"""What each page shows, asked of the same engine calls the MCP tools make.

Search is `KnowledgeEngine.search` with a `SearchInput` validated as `mm_knowledge_search`
validates it; a screen's history is `last` over every session filtered by screen, its
priorKnowledge is `prior_knowledge` as an agent arriving there with nothing visible yet would get
it; a session's recipe is `summarize`. The session timeline reads that session's own step files
(the page at hand, at most `TIMELINE_PAGE` of them): what was visible and the screenshot are in
the files, not the index. Everything runs on a worker thread through `ServerState.query`.
"""

from dataclasses import dataclass, field
from typing import Any

from engine import (
    InvalidInput,
    LastInput,
    PriorKnowledge,
    RenamedId,
    ScreenContext,
    SearchInput,
    SearchPage,
    SessionRecipe,
    StepList,
    StepRecord,
    SummarizeInput,
    Supersession,
    validate,
)
from server.state import ServerState

TIMELINE_PAGE = 200
"""Steps of a session shown at once (the recipe pages the same way)."""
SCREEN_HISTORY = 100
"""Latest steps taken on a screen that its page lists."""
PAGE_SIZE = 20


def search_request(params: dict[str, str]) -> SearchInput | None:
    """The search the page's form asks for, validated as the MCP tool validates its arguments
    (a bad value raises `InvalidInput` naming the field); None when nothing was asked yet."""
    query = params.get("q", "")
    if not query:
        return None
    filters: dict[str, Any] = {
        name: params[name] for name in ("flowTag", "screen", "tool") if params.get(name)
    }
    if params.get("ok") in ("true", "false"):
        filters["ok"] = params["ok"] == "true"
    if params.get("sinceHours"):
        filters["sinceHours"] = _number("filters.sinceHours", params["sinceHours"])
    arguments: dict[str, Any] = {"query": query, "limit": PAGE_SIZE}
    arguments["offset"] = _number("offset", params.get("offset") or "0")
    if params.get("mode"):
        arguments["mode"] = params["mode"]
    if params.get("types"):
        arguments["types"] = [params["types"]]
    if params.get("includeSuperseded") == "on":
        arguments["includeSuperseded"] = True
    if filters:
        arguments["filters"] = filters
    return validate(SearchInput, arguments)


def _number(name: str, text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise InvalidInput(name, f"{text[:40]!r} is not a whole number") from None


async def search(state: ServerState, request: SearchInput) -> SearchPage:
    """Exactly `mm_knowledge_search`'s answer (no current session: a person is not an agent)."""
    return await state.query(lambda: state.engine.search(request))


@dataclass
class TimelineStep:
    """One recorded step as the session page shows it."""

    step_id: str
    record: StepRecord | None
    """None: the file cannot be read (`problem` says why)."""
    problem: str | None = None
    superseded: Supersession | None = None
    recovered_by: str | None = None
    """The step that recovered this failure (from the recipe), shown beside it."""

    @property
    def screenshot(self) -> bool:
        extra = self.record.model_extra if self.record is not None else None
        artifacts = (extra or {}).get("artifacts")
        return isinstance(artifacts, dict) and isinstance(artifacts.get("screenshot"), dict)


@dataclass
class SessionView:
    recipe: SessionRecipe
    steps: list[TimelineStep]
    offset: int
    total: int
    decisions_problem: str | None = None


async def session(state: ServerState, session_id: str, offset: int) -> SessionView:
    """The recipe (`mm_knowledge_summarize`) and the timeline of one page of the session."""
    request = validate(SummarizeInput, {"scope": {"sessionId": session_id}, "offset": offset})
    recipe = await state.query(lambda: state.engine.summarize(request))

    def read() -> SessionView:
        store = state.store
        names = store.step_names(session_id)
        decisions, unreadable = store.read_decisions(session_id)
        recovered = {f.stepId: f.recoveredBy.stepId for f in recipe.failures if f.recoveredBy}
        steps = []
        for name in names[offset : offset + TIMELINE_PAGE]:
            stem = name.removesuffix(".json")
            step = TimelineStep(f"{session_id}/{stem}", None, superseded=decisions.get(stem))
            step.recovered_by = recovered.get(step.step_id)
            try:
                step.record = store.read_step(session_id, name)
            except (OSError, ValueError) as exc:  # pydantic's ValidationError is a ValueError
                step.problem = f"{type(exc).__name__}: {str(exc)[:300]}"
            steps.append(step)
        problem = unreadable.reason if unreadable is not None else None
        return SessionView(recipe, steps, offset, len(names), problem)

    return await state.query(read)


@dataclass
class TestIdSeen:
    test_id: str
    times: int = 0
    failed: int = 0
    last: str = ""
    renamed_to: RenamedId | None = None


@dataclass
class ScreenView:
    name: str
    history: StepList
    prior: PriorKnowledge
    test_ids: list[TestIdSeen] = field(default_factory=list)
    renamed: list[RenamedId] = field(default_factory=list)


async def screen(state: ServerState, name: str) -> ScreenView:
    """What agents did on a screen (its latest steps, superseded ones too, marked), what
    priorKnowledge offers an agent arriving there now, the testIds acted on there and those the
    index knows were renamed (`renames.json` of the live generation)."""
    if not 1 <= len(name) <= 200:
        raise InvalidInput("screen", "a screen name is 1 to 200 characters")
    request = validate(
        LastInput,
        {
            "n": SCREEN_HISTORY,
            "scope": "all",
            "filters": {"screen": name},
            "includeSuperseded": True,
        },
    )

    def read() -> ScreenView:
        engine = state.engine
        history = engine.last(request)
        prior = engine.prior_knowledge(ScreenContext(screen=name))
        renamed = [r for r in engine.renames() if r.screen == name]
        return ScreenView(name, history, prior, _test_ids(history, renamed), renamed)

    return await state.query(read)


def _test_ids(history: StepList, renamed: list[RenamedId]) -> list[TestIdSeen]:
    """The testIds the listed steps acted on, most used first, each with what it became."""
    became = {r.old.lower(): r for r in renamed}
    seen: dict[str, TestIdSeen] = {}
    for step in history.steps:
        test_id = (step.target or {}).get("testId")
        if not test_id:
            continue
        entry = seen.setdefault(
            test_id, TestIdSeen(test_id, renamed_to=became.get(test_id.lower()))
        )
        entry.times += 1
        entry.failed += 0 if step.ok else 1
        entry.last = max(entry.last, step.timestamp)
    return sorted(seen.values(), key=lambda t: (-t.times, t.test_id))


def page_offset(text: str | None) -> int:
    """Where a session's page starts (the pager's links step by `TIMELINE_PAGE`)."""
    offset = _number("offset", text or "0")
    if not 0 <= offset <= 100_000_000:
        raise InvalidInput("offset", "must be between 0 and 100000000")
    return offset
