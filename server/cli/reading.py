"""Commands that read the knowledge: search, last, sessions, summarize, timeline.

Each validates its request as the MCP tool of the same name does and makes the same engine
call, so a command and its tool answer alike.
"""

import sys
from functools import partial
from typing import Annotated, Any

import typer
from rich.markup import escape

from engine import (
    KnownValues,
    LastInput,
    RecipeAction,
    SearchInput,
    SearchPage,
    SessionList,
    SessionRecipe,
    SessionsInput,
    StepList,
    SummarizeInput,
    TimelineInput,
    TimelineResult,
    validate,
)
from server.cli.answer import Answer, Call, answers
from server.cli.options import (
    SESSION_FILTERS,
    STEP_FILTERS,
    MinSalienceOpt,
    MinSimOpt,
    ModeOpt,
    OneScopeOpt,
    ScopeOpt,
    SessionOpt,
    ShowSupersededOpt,
    TypeOpt,
)
from server.cli.render import cells_table, err, out, sessions_table, steps_table


def scope_of(value: str) -> str | dict[str, str]:
    """--scope as a request's scope: 'all', 'current', or a session id."""
    return value if value in ("all", "current") else {"sessionId": value}


def semantic_options(
    mode: str, min_similarity: float | None, types: list[str] | None
) -> dict[str, Any]:
    """The semantic search options as SearchInput keys (None left out: the defaults apply)."""
    options: dict[str, Any] = {"mode": mode}
    if min_similarity is not None:
        options["minSimilarity"] = min_similarity
    if types:
        options["types"] = types
    return options


@answers(STEP_FILTERS)
def search(
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What you are looking for, in any words")
    ],
    limit: Annotated[int, typer.Option("--limit", "-k", help="Results per page (1..100)")] = 20,
    offset: Annotated[
        int, typer.Option("--offset", help="Results to skip: the next page starts at limit")
    ] = 0,
    scope: ScopeOpt = "all",
    mode: ModeOpt = "hybrid",
    min_similarity: MinSimOpt = None,
    types: TypeOpt = None,
    include_superseded: ShowSupersededOpt = False,
    min_salience: MinSalienceOpt = None,
    session: SessionOpt = None,
    *,
    call: Call,
) -> Answer:
    """Search steps of all sessions (or one scope), best first, with match evidence."""
    request_data = {"query": query, "limit": limit, "offset": offset, "filters": call.filters}
    request_data |= semantic_options(mode, min_similarity, types)
    request_data |= {"includeSuperseded": include_superseded}
    request_data |= {} if min_salience is None else {"minSalience": min_salience}
    request = validate(SearchInput, request_data | {"scope": scope_of(scope)})
    engine = call.engine()
    page = engine.search(request, current_session=call.current_session(engine, session))
    return page, partial(_show_page, page)


def _show_page(page: SearchPage) -> None:
    following = page.offset + page.limit if page.nextOffset is None else page.nextOffset
    more = f", next: --offset {following}" if page.hasMore else ""
    title = f"search {page.query!r}"
    if page.sessions():
        sessions_table(title, page.sessions(), page.total, more, page.hint)
    else:
        steps_table(title, page.steps(), page.total, more, page.hint)
    if page.known is not None:
        _show_known(page.known)


def _show_known(known: KnownValues) -> None:
    """The values an empty answer lists (recorded text: shown as data, one list each)."""
    for label, values in (
        ("flowTags", known.flowTags),
        ("screens", known.screens),
        ("nearest recorded phrases", known.phrases),
    ):
        if values:
            out.print(f"  {label}: " + ", ".join(escape(v) for v in values))


@answers(STEP_FILTERS)
def last(
    n: Annotated[int, typer.Option("-n", help="How many steps (1..200)")] = 20,
    scope: ScopeOpt = "current",
    include_superseded: ShowSupersededOpt = False,
    session: SessionOpt = None,
    *,
    call: Call,
) -> Answer:
    """The last N steps of the current session (or of a scope), oldest first."""
    request_data = {"n": n, "scope": scope_of(scope), "filters": call.filters}
    request = validate(LastInput, request_data | {"includeSuperseded": include_superseded})
    engine = call.engine()
    steps = engine.last(request, current_session=call.current_session(engine, session))
    return steps, partial(_show_last, steps)


def _show_last(steps: StepList) -> None:
    steps_table("last steps", steps.steps, steps.total, hint=steps.hint)


@answers(SESSION_FILTERS)
def sessions(
    limit: Annotated[int, typer.Option("--limit", "-k", help="How many sessions (1..50)")] = 10,
    *,
    call: Call,
) -> Answer:
    """Recent sessions, newest first, with goal, flowTags, tags, git and step counts."""
    request = validate(SessionsInput, {"limit": limit, "filters": call.filters})
    found = call.engine().sessions(request)
    return found, partial(_show_sessions, found)


def _show_sessions(found: SessionList) -> None:
    launched = any(s.stateMode for s in found.sessions)
    rows = []
    for s in found.sessions:
        cells = [s.sessionId, s.createdAt, ", ".join(s.flowTags), ", ".join(s.tags)]
        cells += [_git(s.git), s.goal or "", str(s.stepCount), str(s.failedStepCount)]
        cells += [_launch(s.stateMode, s.fixturePreset)] if launched else []
        rows.append(cells)
    columns = ["session", "created", "flowTags", "tags", "git", "goal", "steps", "failed"]
    columns += ["launch"] if launched else []
    cells_table(f"sessions ({found.total} in all)", columns, rows, whole=5)


def _launch(state_mode: str | None, fixture_preset: str | None) -> str:
    """`custom (withTokens)`: how today's recorder launched the wallet; empty when not said."""
    return f"{state_mode or ''}{f' ({fixture_preset})' if fixture_preset else ''}"


def _git(git: dict[str, Any] | None) -> str:
    """`branch@commit`, `*` when the tree was dirty; empty when the session recorded no git."""
    if not git:
        return ""
    where = f"{git.get('branch') or '?'}@{str(git.get('commit') or '?')[:7]}"
    return where + ("*" if git.get("dirty") else "")


@answers()
def summarize(
    session_id: Annotated[
        str | None, typer.Argument(metavar="SESSION_ID", help="Session id (default: --scope)")
    ] = None,
    scope: OneScopeOpt = "current",
    session: SessionOpt = None,
    offset: Annotated[int, typer.Option("--offset", help="First step of the page")] = 0,
    *,
    call: Call,
) -> Answer:
    """A session's recipe: screens visited, actions that worked, failures and their recovery
    (a long session 200 steps at a time: --offset)."""
    request_data: dict[str, Any] = {"scope": scope_of(scope), "offset": offset}
    if session_id:
        request_data["sessionId"] = session_id
    request = validate(SummarizeInput, request_data)
    engine = call.engine()
    recipe = engine.summarize(request, current_session=call.current_session(engine, session))
    return recipe, partial(_show_recipe, recipe)


def _show_recipe(recipe: SessionRecipe) -> None:
    if not sys.stdout.isatty():
        _recipe_rows(recipe)
        return
    s = recipe.session
    out.print(f"[bold]{s.sessionId}[/bold]  {s.createdAt}  goal: {escape(s.goal or '-')}")
    launch = f"  launch: {_launch(s.stateMode, s.fixturePreset)}" if s.stateMode else ""
    out.print(escape(f"flowTags: {', '.join(s.flowTags) or '-'}  steps: {s.stepCount}{launch}"))
    out.print(escape("screens: " + " → ".join(recipe.screens)))
    for a in recipe.actions:
        out.print(escape(f"  ✓ {_recipe_line(a)}"))
    for f in recipe.failures:
        fix = (
            f" → recovered by {f.recoveredBy.tool} {f.recoveredBy.target}" if f.recoveredBy else ""
        )
        line = f" {f.tool} on {f.screen}: {f.target or '-'} ({f.errorCode}){fix}"
        out.print("  [red]✗[/red]" + escape(line))
        for a in f.batch or []:
            out.print(escape(f"      ? {_recipe_line(a)}"))
        if f.note:
            out.print(escape(f"      {f.note}"))
    for w in recipe.warnings:
        err.print(f"[yellow]warning[/yellow] {escape(w['path'])}: {escape(w['reason'])}")
    if recipe.nextOffset is not None:
        out.print(f"steps from {recipe.offset} only; next: --offset {recipe.nextOffset}")


def _recipe_rows(recipe: SessionRecipe) -> None:
    """The recipe piped: a `# ` line with the session, then a tab-separated line per action
    (`✓`), failure (`✗`) and action of a failed batch (`?`)."""
    s = recipe.session
    title = f"{s.sessionId} {s.createdAt} goal: {s.goal or '-'}; flowTags: "
    title += f"{', '.join(s.flowTags) or '-'}; steps: {s.stepCount}; screens: "
    title += " → ".join(recipe.screens)
    if recipe.nextOffset is not None:
        title += f"; steps from {recipe.offset} only, next: --offset {recipe.nextOffset}"
    rows = [_recipe_row("✓", a) for a in recipe.actions]
    for f in recipe.failures:
        fix = f"{f.recoveredBy.tool} {f.recoveredBy.target}" if f.recoveredBy else ""
        cells = [f.tool, f.screen, f.target or "", "", f.errorCode or "", fix, f.note or ""]
        rows.append(["✗", "", *cells])
        rows += [_recipe_row("?", a) for a in f.batch or []]
    columns = ["ok", "batch", "tool", "screen", "target", "text", "error", "recovered by", "note"]
    cells_table(title, columns, rows)
    for w in recipe.warnings:
        err.print(f"warning {w['path']}: {w['reason']}", markup=False)


def _recipe_row(mark: str, a: RecipeAction) -> list[str]:
    batch = "" if a.batchIndex is None else str(a.batchIndex)
    return [mark, batch, a.tool, a.screen, a.target or "", a.text or "", "", "", ""]


def _recipe_line(a: RecipeAction) -> str:
    """`click on home: testId:coin-overview-send`, `[batch 2] type on send: … text='0.1'`."""
    text = f" text={a.text!r}" if a.text else ""
    place = f"[batch {a.batchIndex}] " if a.batchIndex is not None else ""
    return f"{place}{a.tool} on {a.screen}: {a.target or '-'}{text}"


@answers()
def timeline(
    step_id: Annotated[
        str | None, typer.Argument(metavar="STEP_ID", help="Anchor step id (or use --query)")
    ] = None,
    query: Annotated[str | None, typer.Option("--query", help="Anchor on its best hit")] = None,
    before: Annotated[int, typer.Option("--before", "-B", help="Steps before (0-50)")] = 5,
    after: Annotated[int, typer.Option("--after", "-A", help="Steps after (0-50)")] = 5,
    scope: Annotated[str, typer.Option("--scope", help="'session' or 'all' (by time)")] = "session",
    *,
    call: Call,
) -> Answer:
    """The steps before and after a step: in its session, or across sessions by time."""
    request_data: dict[str, Any] = {"before": before, "after": after, "scope": scope}
    request_data |= {"anchor": step_id} if step_id else {}
    request_data |= {"query": query} if query else {}
    line = call.engine().timeline(validate(TimelineInput, request_data))

    def show() -> None:
        if not sys.stdout.isatty():
            _timeline_rows(line)
            return
        for step in [*line.before, line.anchor, *line.after]:
            mark = "▶" if step.stepId == line.anchor.stepId else " "
            flag = " [yellow](superseded)[/yellow]" if step.isSuperseded else ""
            ok = "" if step.ok else " [red]✗[/red]"
            out.print(f"{mark} {step.timestamp}  {step.stepId}  {escape(step.snippet)}{ok}{flag}")
        for s in line.sessions.values():
            out.print(
                f"  {s.id}: {s.goal or '-'} ({', '.join(s.flowTags) or '-'}, {s.stepCount} steps)"
            )

    return line, show


def _timeline_rows(line: TimelineResult) -> None:
    """The timeline piped: a `# ` line, then a tab-separated line per step (`▶` marks the
    anchor) and one per session."""
    rows = []
    for step in [*line.before, line.anchor, *line.after]:
        mark = "▶" if step.stepId == line.anchor.stepId else ""
        flags = ("" if step.ok else "✗") + (" superseded" if step.isSuperseded else "")
        rows.append([mark, step.timestamp, step.stepId, step.snippet, flags.strip()])
    columns = ["anchor", "time", "step", "snippet", "failed / superseded"]
    cells_table(f"timeline around {line.anchor.stepId}", columns, rows)
    sessions = [
        [s.id, s.goal or "-", ", ".join(s.flowTags) or "-", str(s.stepCount)]
        for s in line.sessions.values()
    ]
    cells_table("sessions", ["session", "goal", "flowTags", "steps"], sessions)
