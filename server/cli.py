"""`knowhow` command line: index, search, last, sessions, summarize, timeline, supersede,
duplicates, cluster, reindex, batch-search, demo.

Human-readable by default, `--json` for machines. Errors print `{"ok": false, "error": …}`
(with --json) or a one-line message, and exit with status 2.
"""

import inspect
import json
import os
import shutil
import socket
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial, wraps
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine import (
    ClusterInput,
    ClusterList,
    DuplicateList,
    DuplicatesInput,
    KnowhowError,
    KnowledgeEngine,
    KnowledgeStore,
    LastInput,
    NotFound,
    Result,
    SearchInput,
    SearchPage,
    SessionList,
    SessionMemory,
    SessionRecipe,
    SessionsInput,
    Settings,
    StepList,
    StepSummary,
    SummarizeInput,
    SupersedeInput,
    SyncReport,
    TimelineInput,
    WriteFailed,
    WriterLease,
    ensure_index,
    rebuild,
    supersede_step,
    validate,
)
from server.envelope import envelope
from server.gc_policy import settle_for_searching

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
PIPED_WIDTH = 4096
"""Output read by a program or a pager is not wrapped at 80 columns: lines are as long as
their content, so step ids and commands stay whole and copy-pasteable."""
out = Console(width=None if sys.stdout.isatty() else PIPED_WIDTH)
err = Console(stderr=True, width=None if sys.stderr.isatty() else PIPED_WIDTH)

RootOpt = Annotated[Path | None, typer.Option("--root", help="Knowledge root [env KNOWHOW_ROOT]")]
IndexOpt = Annotated[Path | None, typer.Option("--index", help="Index dir [env KNOWHOW_INDEX]")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output")]
ScopeOpt = Annotated[str, typer.Option("--scope", help="'all', 'current' or a session id")]
OneScopeOpt = Annotated[str, typer.Option("--scope", help="'current' or a session id")]
SessionOpt = Annotated[
    str | None,
    typer.Option("--session", help="Session that scope 'current' means (default: newest)"),
]
FlowOpt = Annotated[str | None, typer.Option("--flow-tag", help="Only sessions with this flowTag")]
TagOpt = Annotated[str | None, typer.Option("--tag", help="Only sessions with this tag")]
ScreenOpt = Annotated[str | None, typer.Option("--screen", help="Only steps on this screen")]
SinceOpt = Annotated[int | None, typer.Option("--since-hours", help="Sessions of the last N hours")]
BranchOpt = Annotated[str | None, typer.Option("--git-branch", help="Only this git branch")]
OkOpt = Annotated[
    bool | None, typer.Option("--ok/--failed", help="Only successful / only failed steps")
]
ToolOpt = Annotated[str | None, typer.Option("--tool", help="Only this tool (mm_click or click)")]
ModeOpt = Annotated[
    str, typer.Option("--mode", help="hybrid (words and meaning), keyword or semantic")
]
MinSimOpt = Annotated[
    float | None,
    typer.Option("--min-similarity", help="Lowest cosine (0..1) a semantic-only hit needs"),
]
TypeOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--type", help="step and/or screen (repeat; default both), or session (workflows) alone"
    ),
]
AfterOpt = Annotated[str | None, typer.Option("--after", help="Steps at or after (ISO time)")]
BeforeOpt = Annotated[str | None, typer.Option("--before", help="Steps before (ISO time)")]

SESSION_FILTERS = {
    "flow_tag": ("flowTag", FlowOpt),
    "tag": ("tag", TagOpt),
    "since_hours": ("sinceHours", SinceOpt),
    "git_branch": ("gitBranch", BranchOpt),
}
STEP_FILTERS = SESSION_FILTERS | {
    "screen": ("screen", ScreenOpt),
    "ok": ("ok", OkOpt),
    "tool": ("tool", ToolOpt),
    "after": ("after", AfterOpt),
    "before": ("before", BeforeOpt),
}
"""CLI option name -> (name in `filters`, option): search and last take all, sessions the
session ones. Declared once, added to each command by `with_filters`."""

T = TypeVar("T")
C = TypeVar("C", bound=Callable[..., None])


def with_filters(options: dict[str, tuple[str, Any]]) -> Callable[[C], C]:
    """Give a command the filter options (`--flow-tag` …) and pass them on as one `filters`
    dict in the tools' names (None when none was given), so that search, last and sessions
    declare and build their filters in one place."""

    def decorate(command: C) -> C:
        signature = inspect.signature(command)
        own = [p for p in signature.parameters.values() if p.name != "filters"]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=opt)
            for name, (_, opt) in options.items()
        ]

        @wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> None:
            given = {key: kwargs.pop(name) for name, (key, _) in options.items()}
            command(*args, **kwargs, filters=_filters(**given))

        wrapper.__signature__ = signature.replace(parameters=own + added)  # type: ignore[attr-defined]
        return wrapper  # type: ignore[return-value]

    return decorate


def _settings(root: Path | None, index: Path | None) -> Settings:
    settings = Settings()
    updates: dict[str, Any] = {}
    if root is not None:
        updates["root"] = root
    if index is not None:
        updates["index"] = index
    return settings.model_copy(update=updates)


def _engine(settings: Settings, *, cache_searches: bool = True) -> KnowledgeEngine:
    return KnowledgeEngine(
        settings.root,
        settings.index,
        synonyms=settings.synonym_table(),
        cache_searches=cache_searches,
    )


def _current(engine: KnowledgeEngine, settings: Settings, session: str | None) -> str | None:
    """What scope "current" means here: --session, else KNOWHOW_SESSION, else the newest."""
    return session or settings.session or engine.newest_session()


def _run(as_json: bool, action: Callable[[], T]) -> T:
    """Run a command's action; a failure is an error envelope (--json) or a one-line message,
    and exit status 2 — never a traceback where a program reads JSON."""
    try:
        return action()
    except KnowhowError as exc:
        _fail(exc, as_json)
    except OSError as exc:  # a file or folder the command could not read or write
        _fail(KnowhowError(str(exc)), as_json)
    except Exception as exc:
        if not as_json:
            raise
        # Machine output stays parseable even on a bug; the kind is kept in the message.
        _fail(KnowhowError(f"{type(exc).__name__}: {exc}"), as_json)


def _fail(error: KnowhowError, as_json: bool) -> NoReturn:
    if as_json:
        sys.stdout.write(orjson.dumps(envelope(error)).decode() + "\n")
    else:
        err.print(f"[red]{error.code}[/red]: {error.message}")
    raise typer.Exit(2) from None


def _emit(result: Result | dict[str, Any], as_json: bool, render: Callable[[], None]) -> None:
    if as_json:
        sys.stdout.write(orjson.dumps(envelope(result)).decode() + "\n")
    else:
        render()


def _scope(value: str) -> str | dict[str, str]:
    return value if value in ("all", "current") else {"sessionId": value}


def _filters(**values: Any) -> dict[str, Any] | None:
    present = {k: v for k, v in values.items() if v is not None}
    return present or None


@contextmanager
def _progress(label: str, quiet: bool) -> Iterator[Callable[[int, int], None]]:
    if quiet:
        yield lambda done, total: None
        return
    columns = (TextColumn(label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=True) as bar:
        task = bar.add_task(label, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)


def _report(report: SyncReport, as_json: bool) -> None:
    def render() -> None:
        if report.rebuilt_because:
            err.print(f"[yellow]the index was damaged[/yellow] ({report.rebuilt_because}): rebuilt")
        out.print(
            f"indexed {report.steps_indexed} steps in {report.sessions_indexed} sessions "
            f"({report.sessions_unchanged} unchanged, {report.sessions_deleted} removed) "
            f"in {report.seconds:.2f}s"
        )
        for skip in report.skipped:
            err.print(f"[yellow]skipped[/yellow] {skip.path}: {skip.reason}")

    _emit(report.as_dict(), as_json, render)


def _store(settings: Settings) -> KnowledgeStore:
    """The knowledge root to index; a root that does not exist is an error naming it (indexing
    it would silently find nothing)."""
    if not settings.root.is_dir():
        raise NotFound(
            f"knowledge root {settings.root} does not exist; pass --root (or KNOWHOW_ROOT) "
            "with the folder that holds the session folders"
        )
    return KnowledgeStore(settings.root)


def _writing_index(settings: Settings, build: Callable[[], SyncReport]) -> SyncReport:
    """Run an index build; a refused write (disk full, no permission, a file where a folder
    should be) is `MM_WRITE_FAILED` naming the index, as a recording tool's is. The store
    reports unreadable knowledge files as skips, so an OSError that escapes is the index's."""
    try:
        return build()
    except OSError as exc:
        raise WriteFailed.for_index(exc, settings.index) from exc


@app.command()
def index(root: RootOpt = None, index_dir: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Bring the index up to date with the knowledge root (builds it the first time).

    When a running `knowhow serve` holds the writer lease it keeps the index current itself:
    then this says so and exits 0."""
    settings = _settings(root, index_dir)
    store = _run(as_json, lambda: _store(settings))
    lease = WriterLease(settings.index)
    if settings.index.is_dir() and not lease.try_acquire():
        message = (
            f"a running knowhow server is the index writer of {settings.index} and keeps it "
            "current (recorded steps are searchable within about a second); nothing to do"
        )
        _emit({"indexedBy": "writer", "message": message}, as_json, lambda: out.print(message))
        return
    try:
        with _progress("indexing", as_json) as progress:
            report = _run(
                as_json,
                lambda: _writing_index(
                    settings, lambda: ensure_index(store, settings.index, progress)
                ),
            )
    finally:
        lease.release()
    _report(report, as_json)


@app.command()
def reindex(root: RootOpt = None, index_dir: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Rebuild the index from the files into a new generation and swap it in atomically."""
    settings = _settings(root, index_dir)
    store = _run(as_json, lambda: _store(settings))
    with _progress("rebuilding", as_json) as progress:
        report = _run(
            as_json,
            lambda: _writing_index(settings, lambda: rebuild(store, settings.index, progress)),
        )
    _report(report, as_json)


def _git(git: dict[str, Any] | None) -> str:
    """`branch@commit`, `*` when the tree was dirty; empty when the session recorded no git."""
    if not git:
        return ""
    where = f"{git.get('branch') or '?'}@{str(git.get('commit') or '?')[:7]}"
    return where + ("*" if git.get("dirty") else "")


def _render_steps(
    title: str, steps: list[StepSummary], total: int, extra: str = "", hint: str | None = None
) -> None:
    """A table of result rows. Ids never wrap (a narrow terminal folds the snippet instead);
    the score column appears only when the rows have scores (search, not last); the screen
    is `acted on → ended on` when the two differ, as the match evidence names the first."""
    heading = escape(f"{title} ({total} in all{extra})")
    if not steps:
        out.print(heading + (f": {escape(hint)}" if hint else ""))
        return
    table = Table(title=heading, show_lines=False)
    scored = any(step.score is not None for step in steps)
    table.add_column("#", no_wrap=True)
    if scored:
        table.add_column("score", no_wrap=True)
    table.add_column("session / step", no_wrap=True)
    table.add_column("tool", no_wrap=True)
    table.add_column("screen", no_wrap=True)
    table.add_column("snippet", overflow="fold")
    for rank, step in enumerate(steps, 1):
        mark = "" if step.ok else " [red]✗[/red]"
        screen = f"{step.onScreen} → {step.screen}" if step.onScreen else step.screen
        cells = [str(rank)] + ([f"{step.score:.1f}" if step.score is not None else ""] * scored)
        cells += [step.stepId, escape(step.tool) + mark, escape(screen), escape(step.snippet)]
        table.add_row(*cells)
    out.print(table)
    if hint:
        out.print(escape(hint))


def _render_sessions(title: str, sessions: list[SessionMemory], total: int, extra: str) -> None:
    """A table of session results: the session, its goal, the screens it went through and
    the steps that matched."""
    table = Table(title=escape(f"{title} ({total} sessions in all{extra})"), show_lines=False)
    for column in ("#", "score", "session", "goal", "screens", "matched steps"):
        table.add_column(column, overflow="fold", no_wrap=column in ("#", "score", "session"))
    for rank, row in enumerate(sessions, 1):
        table.add_row(
            str(rank),
            f"{row.score:.2f}",
            row.sessionId,
            escape(row.session.goal or ", ".join(row.session.flowTags)),
            escape(" → ".join(row.screens)),
            "\n".join(step.split("/", 1)[-1] for step in row.matchedSteps),
        )
    out.print(table)


@app.command()
@with_filters(STEP_FILTERS)
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in any words")],
    limit: Annotated[int, typer.Option("--limit", "-k")] = 20,
    offset: Annotated[int, typer.Option("--offset")] = 0,
    scope: ScopeOpt = "all",
    mode: ModeOpt = "hybrid",
    min_similarity: MinSimOpt = None,
    types: TypeOpt = None,
    session: SessionOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
    filters: dict[str, Any] | None = None,
) -> None:
    """Search steps of all sessions (or one scope), best first, with match evidence."""
    settings = _settings(root, index_dir)
    request_data = {"query": query, "limit": limit, "offset": offset, "filters": filters}
    request_data |= _semantic_options(mode, min_similarity, types)

    def run() -> SearchPage:
        request = validate(SearchInput, request_data | {"scope": _scope(scope)})
        engine = _engine(settings)
        return engine.search(request, current_session=_current(engine, settings, session))

    page = _run(as_json, run)

    def render() -> None:
        more = f", next: --offset {page.offset + page.limit}" if page.hasMore else ""
        title = f"search {page.query!r}"
        if page.sessions():
            _render_sessions(title, page.sessions(), page.total, more)
        else:
            _render_steps(title, page.steps(), page.total, more, page.hint)

    _emit(page, as_json, render)


@app.command()
@with_filters(STEP_FILTERS)
def last(
    n: Annotated[int, typer.Option("-n")] = 20,
    scope: ScopeOpt = "current",
    session: SessionOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
    filters: dict[str, Any] | None = None,
) -> None:
    """The last N steps of the current session (or of a scope), oldest first."""
    settings = _settings(root, index_dir)

    def run() -> StepList:
        request = validate(LastInput, {"n": n, "scope": _scope(scope), "filters": filters})
        engine = _engine(settings)
        return engine.last(request, current_session=_current(engine, settings, session))

    steps = _run(as_json, run)
    render = partial(_render_steps, "last steps", steps.steps, steps.total, hint=steps.hint)
    _emit(steps, as_json, render)


@app.command()
@with_filters(SESSION_FILTERS)
def sessions(
    limit: Annotated[int, typer.Option("--limit", "-k")] = 10,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
    filters: dict[str, Any] | None = None,
) -> None:
    """Recent sessions, newest first, with goal, flowTags, tags, git and step counts."""
    settings = _settings(root, index_dir)

    def run() -> SessionList:
        request = validate(SessionsInput, {"limit": limit, "filters": filters})
        return _engine(settings).sessions(request)

    found = _run(as_json, run)

    def render() -> None:
        table = Table(title=f"sessions ({found.total} in all)")
        for column in ("session", "created", "flowTags", "tags", "git"):
            table.add_column(column, no_wrap=True)
        for column in ("goal", "steps", "failed"):
            table.add_column(column, overflow="fold")
        for s in found.sessions:
            cells = [s.sessionId, s.createdAt, ", ".join(s.flowTags), ", ".join(s.tags)]
            cells += [_git(s.git), s.goal or "", str(s.stepCount), str(s.failedStepCount)]
            table.add_row(*(escape(cell) for cell in cells))
        out.print(table)

    _emit(found, as_json, render)


@app.command()
def summarize(
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: --scope)")] = None,
    scope: OneScopeOpt = "current",
    session: SessionOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """A session's recipe: screens visited, actions that worked, failures and their recovery."""
    settings = _settings(root, index_dir)
    request_data: dict[str, Any] = {"scope": _scope(scope)}
    if session_id:
        request_data["sessionId"] = session_id

    def run() -> SessionRecipe:
        request = validate(SummarizeInput, request_data)
        engine = _engine(settings)
        return engine.summarize(request, current_session=_current(engine, settings, session))

    recipe = _run(as_json, run)

    def render() -> None:
        s = recipe.session
        out.print(f"[bold]{s.sessionId}[/bold]  {s.createdAt}  goal: {escape(s.goal or '-')}")
        out.print(escape(f"flowTags: {', '.join(s.flowTags) or '-'}  steps: {s.stepCount}"))
        out.print(escape("screens: " + " → ".join(recipe.screens)))
        for a in recipe.actions:
            text = f" text={a.text!r}" if a.text else ""
            out.print(escape(f"  ✓ {a.tool} on {a.screen}: {a.target or '-'}{text}"))
        for f in recipe.failures:
            fix = (
                f" → recovered by {f.recoveredBy.tool} {f.recoveredBy.target}"
                if f.recoveredBy
                else ""
            )
            line = f" {f.tool} on {f.screen}: {f.target or '-'} ({f.errorCode}){fix}"
            out.print("  [red]✗[/red]" + escape(line))

    _emit(recipe, as_json, render)


@app.command()
def timeline(
    step_id: Annotated[str | None, typer.Argument(help="Anchor step id (or use --query)")] = None,
    query: Annotated[str | None, typer.Option("--query", help="Anchor on its best hit")] = None,
    before: Annotated[int, typer.Option("--before", "-B", help="Steps before (0-50)")] = 5,
    after: Annotated[int, typer.Option("--after", "-A", help="Steps after (0-50)")] = 5,
    scope: Annotated[str, typer.Option("--scope", help="'session' or 'all' (by time)")] = "session",
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The steps before and after a step: in its session, or across sessions by time."""
    settings = _settings(root, index_dir)
    request_data: dict[str, Any] = {"before": before, "after": after, "scope": scope}
    request_data |= {"anchor": step_id} if step_id else {}
    request_data |= {"query": query} if query else {}
    line = _run(as_json, lambda: _engine(settings).timeline(validate(TimelineInput, request_data)))

    def render() -> None:
        for step in [*line.before, line.anchor, *line.after]:
            mark = "▶" if step.stepId == line.anchor.stepId else " "
            flag = " [yellow](superseded)[/yellow]" if step.isSuperseded else ""
            ok = "" if step.ok else " [red]✗[/red]"
            out.print(f"{mark} {step.timestamp}  {step.stepId}  {escape(step.snippet)}{ok}{flag}")
        for s in line.sessions.values():
            out.print(
                f"  {s.id}: {s.goal or '-'} ({', '.join(s.flowTags) or '-'}, {s.stepCount} steps)"
            )

    _emit(line, as_json, render)


@app.command()
def supersede(
    step_id: Annotated[str, typer.Argument(help="The step that no longer works as recorded")],
    by: Annotated[str | None, typer.Option("--by", help="The newer step that works")] = None,
    reason: Annotated[str | None, typer.Option("--reason", help="Why")] = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Mark a step superseded (written to its session's superseded.json; `knowhow index` or a
    running server re-indexes it)."""
    settings = _settings(root, index_dir)
    request_data = {"stepId": step_id, "supersededBy": by, "reason": reason}
    request = {k: v for k, v in request_data.items() if v is not None}
    store = KnowledgeStore(settings.root)
    done = _run(as_json, lambda: supersede_step(store, validate(SupersedeInput, request)))
    _emit(done, as_json, lambda: out.print(f"{done.stepId} superseded ({done.supersededAt})"))


def _table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    """A table of plain cells: long ones fold, the first column (a count or a type) never."""
    table = Table(title=escape(title))
    for number, column in enumerate(columns):
        table.add_column(column, overflow="fold", no_wrap=number == 0)
    for row in rows:
        table.add_row(*(escape(cell) for cell in row))
    out.print(table)


SupersededOpt = Annotated[
    bool, typer.Option("--include-superseded", help="Also count superseded steps")
]


@app.command()
@with_filters(STEP_FILTERS)
def duplicates(
    threshold: Annotated[
        float, typer.Option("--threshold", help="Lowest cosine (0..1) within a group")
    ] = 0.95,
    types: Annotated[
        list[str] | None,
        typer.Option("--type", help="step, screen and/or session (repeat; default all)"),
    ] = None,
    limit: Annotated[int, typer.Option("--limit", "-k", help="Groups shown (1..100)")] = 20,
    include_superseded: SupersededOpt = False,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
    filters: dict[str, Any] | None = None,
) -> None:
    """Groups of near-identical memories, largest first, with counts and example ids."""
    settings = _settings(root, index_dir)
    request_data: dict[str, Any] = {"similarityThreshold": threshold, "limit": limit}
    request_data |= {"filters": filters, "includeSuperseded": include_superseded}
    request_data |= {"types": types} if types else {}

    def run() -> DuplicateList:
        return _engine(settings).find_duplicates(validate(DuplicatesInput, request_data))

    found = _run(as_json, run)

    def render() -> None:
        _table(
            f"duplicate groups ({found.total} in all, {found.memories} memories)",
            ["type", "count", "texts", "text", "examples"],
            [
                [
                    g.type,
                    str(g.count),
                    str(g.distinctTexts),
                    g.text or "?",
                    "\n".join(g.examples[:2]),
                ]
                for g in found.groups
            ],
        )
        if found.degraded:
            err.print(f"[yellow]only identical texts grouped[/yellow]: {escape(found.degraded)}")

    _emit(found, as_json, render)


@app.command()
@with_filters(STEP_FILTERS)
def cluster(
    kind: Annotated[
        str, typer.Option("--type", help="step, screen or session (default step)")
    ] = "step",
    clusters: Annotated[int, typer.Option("--clusters", "-n", help="How many (2..50)")] = 5,
    include_superseded: SupersededOpt = False,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
    filters: dict[str, Any] | None = None,
) -> None:
    """Cluster one type of memory by meaning: size, top terms and examples of each cluster."""
    settings = _settings(root, index_dir)
    request_data = {"type": kind, "nClusters": clusters, "filters": filters}
    request_data |= {"includeSuperseded": include_superseded}

    def run() -> ClusterList:
        return _engine(settings).cluster(validate(ClusterInput, request_data))

    found = _run(as_json, run)

    def render() -> None:
        _table(
            f"{found.type} clusters ({found.memories} memories)",
            ["size", "top terms", "nearest the centre", "example"],
            [
                [str(c.size), ", ".join(c.topTerms), c.text or "?", (c.examples or [""])[0]]
                for c in found.clusters
            ],
        )
        for note in (found.hint, found.degraded):
            if note:
                out.print(escape(note))

    _emit(found, as_json, render)


@app.command("batch-search")
def batch_search(
    queries: Annotated[Path, typer.Option("--queries", help="JSONL with {qid, query} lines")],
    run_file: Annotated[Path, typer.Option("--run", help="TREC run file to write")],
    k: Annotated[int, typer.Option("--k", help="Results per query (1..100)")] = 100,
    mode: ModeOpt = "hybrid",
    min_similarity: MinSimOpt = None,
    types: TypeOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
) -> None:
    """Answer every query of a file with one loaded index; write a TREC run, print latencies."""
    settings = _settings(root, index_dir)
    # Every query is computed: the search cache serves agents asking again, while a file of
    # queries (often repeated) is answered to measure them.
    engine = _run(False, lambda: _engine(settings, cache_searches=False))
    # The index is opened (and in hybrid/semantic mode the model loaded, ~0.5-2 s) before the
    # clock starts: the latencies are those of searches, not of starting the process.
    _run(False, engine.refresh)
    if mode != "keyword":
        engine.semantic()
    settle_for_searching()
    latencies: list[float] = []
    cpu: list[float] = []
    """CPU time per search (all threads): what a search costs, whatever else runs meanwhile."""
    options = _semantic_options(mode, min_similarity, types)
    tag = "knowhow" if mode == "hybrid" else f"knowhow-{mode}"  # the run's name in score.py
    with run_file.open("w", encoding="utf-8") as handle:
        for line in queries.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            try:
                request = validate(
                    SearchInput, {"query": item.get("query", ""), "limit": k, **options}
                )
            except KnowhowError as exc:
                err.print(f"[yellow]skipped query {item.get('qid')!r}[/yellow]: {exc.message}")
                continue
            started, cpu_started = time.perf_counter(), time.process_time()
            page: SearchPage = _run(False, lambda r=request: engine.search(r))  # type: ignore[misc]
            latencies.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            rows = [(s.stepId, s.score) for s in page.steps()]
            rows += [(s.sessionId, s.score) for s in page.sessions()]  # types: ["session"]
            for rank, (doc_id, score) in enumerate(rows, 1):
                handle.write(f"{item['qid']} Q0 {doc_id} {rank} {score} {tag}\n")
    cpu_p50 = round(statistics.median(cpu), 3) if cpu else 0.0
    sys.stdout.write(json.dumps(_percentiles(latencies) | {"cpu_p50_ms": cpu_p50}) + "\n")


def _semantic_options(
    mode: str, min_similarity: float | None, types: list[str] | None
) -> dict[str, Any]:
    """The semantic search options as SearchInput keys (None left out: the defaults apply)."""
    options: dict[str, Any] = {"mode": mode}
    if min_similarity is not None:
        options["minSimilarity"] = min_similarity
    if types:
        options["types"] = types
    return options


def _percentiles(values: list[float]) -> dict[str, float]:
    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    ordered = sorted(values)

    def pick(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)

    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": pick(0.95),
        "p99_ms": pick(0.99),
    }


def main() -> None:  # pragma: no cover - console entry
    app()


DEMO_QUERIES = (
    "send flow ETH to another account",
    "click confirm",
    "sned eth",
    "coin-overview",
)


@app.command()
def demo(
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    serve_mcp: Annotated[
        bool, typer.Option("--serve", help="Then serve MCP over HTTP and the demo wallet app")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="MCP HTTP port")] = 8765,
    app_port: Annotated[int, typer.Option("--app-port", help="Demo wallet app port")] = 8766,
) -> None:
    """Index the knowledge root and show example searches (an empty root gets the bundled sample
    sessions first); with --serve, then serve MCP over HTTP and the demo wallet app."""
    settings = _settings(root, index_dir)
    if serve_mcp:  # before anything is printed: no banner for a server that cannot start
        _run(False, lambda: _ports_free({"--port": port, "--app-port": app_port}))
    from server.demo import SAMPLE_ROOT

    store = KnowledgeStore(settings.root)
    if not store.session_ids():
        shutil.copytree(SAMPLE_ROOT, settings.root, dirs_exist_ok=True)
        out.print(f"[yellow]{settings.root} was empty: copied the bundled sample sessions[/yellow]")
    with _progress("indexing", False) as progress:
        report = _run(False, lambda: ensure_index(store, settings.index, progress))
    _report(report, False)
    engine = _engine(settings)
    for text in DEMO_QUERIES:
        page = engine.search(SearchInput(query=text, limit=3))
        _render_steps(f"search {text!r}", page.steps(), page.total)
    knowhow = _command()
    out.print(
        f"Try: {knowhow} search 'your words' --root {settings.root} --index {settings.index}",
        soft_wrap=True,
    )
    if knowhow != "knowhow":
        out.print(
            f"({knowhow} is not on PATH: run it by that path, or `source "
            f"{Path(knowhow).parent / 'activate'}` to type just `knowhow`)",
            soft_wrap=True,
        )
    if serve_mcp:
        _serve_demo(settings, port, app_port)


def _command() -> str:
    """How to run knowhow from here: `knowhow` when that is on PATH (or cannot be told), else
    the path this one was started by (`.venv/bin/knowhow` after `make run`)."""
    started = Path(sys.argv[0])
    on_path = shutil.which("knowhow")
    if started.name != "knowhow" or (on_path and Path(on_path).resolve() == started.resolve()):
        return "knowhow"
    return os.path.relpath(started.resolve()) if started.is_absolute() else str(started)


def _ports_free(ports: dict[str, int], host: str = "127.0.0.1") -> None:
    """Each port can be bound on `host`, else an error naming the option that sets it (said
    before anything starts, not as a server's traceback after its banner)."""
    host = host.strip("[]")
    for option, port in ports.items():
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise KnowhowError(
                    f"port {port} is not free ({exc.strerror}); is another knowhow demo or "
                    f"server running? Stop it, or choose another port with {option}"
                ) from None


def _serve_demo(settings: Settings, port: int, app_port: int) -> None:
    from server.app import serve as run_server
    from server.demo import demo_app
    from server.settings import ServerSettings

    server_settings = ServerSettings(
        root=settings.root, index=settings.index, transport="http", port=port
    )
    with demo_app(app_port) as app_url:
        out.print(
            f"\n[bold]MCP server[/bold]: http://127.0.0.1:{port}/mcp (streamable HTTP)\n"
            f'  client config: {{"url": "http://127.0.0.1:{port}/mcp"}}\n'
            f"  or over stdio: {_command()} serve --root {settings.root} --index {settings.index}\n"
            f"[bold]Demo wallet[/bold]: {app_url} (password in server/demo/demo_app/README.md);\n"
            f'  try mm_launch {{"url": "{app_url}", "flowTags": ["send"]}}, then '
            "mm_describe_screen.\nCtrl-C stops both."
        )
        run_server(server_settings)


@app.command()
def serve(
    transport: Annotated[
        str | None, typer.Option("--transport", help="'stdio' (default) or 'http'")
    ] = None,
    host: Annotated[
        str | None, typer.Option("--host", help="HTTP address (default 127.0.0.1)")
    ] = None,
    port: Annotated[int | None, typer.Option("--port", help="HTTP port (default 8765)")] = None,
    token: Annotated[
        str | None, typer.Option("--token", help="Bearer token for HTTP (env KNOWHOW_TOKEN)")
    ] = None,
    tool_prefix: Annotated[
        str | None, typer.Option("--tool-prefix", help="Prefix of tool names (default mm_)")
    ] = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    chromium: Annotated[
        Path | None,
        typer.Option("--chromium", help="Chromium of the browser tools (env KNOWHOW_CHROMIUM)"),
    ] = None,
    screen_rules: Annotated[
        Path | None,
        typer.Option(
            "--screen-rules",
            exists=True,
            dir_okay=False,
            help="Screen-detection rules (JSON) of the app under test; default MetaMask's",
        ),
    ] = None,
    verbose: Annotated[
        int, typer.Option("-v", "--verbose", count=True, help="-v info, -vv debug (stderr)")
    ] = 0,
) -> None:
    """Serve the knowledge tools over MCP: stdio by default, streamable HTTP with --transport."""
    from pydantic import ValidationError
    from rich.markup import escape

    from server.app import serve as run_server
    from server.browser import InvalidScreenRules, load_screen_rules
    from server.http import UnsafeBinding
    from server.settings import ServerSettings

    given: dict[str, Any] = {"transport": transport, "host": host, "port": port, "token": token}
    given |= {"tool_prefix": tool_prefix, "root": root, "index": index_dir}
    given |= {"chromium": chromium, "screen_rules": screen_rules}
    try:
        settings = ServerSettings(**{k: v for k, v in given.items() if v is not None})
        load_screen_rules(settings.screen_rules)  # a bad rules file is reported, not a traceback
        if settings.transport == "http":
            _ports_free({"--port": settings.port}, settings.host)
        settle_for_searching()
        run_server(settings, verbose)
    except (ValidationError, UnsafeBinding, InvalidScreenRules, KnowhowError) as exc:
        err.print("[red]cannot serve[/red]:", escape(str(exc)))
        raise typer.Exit(2) from None


if __name__ == "__main__":  # pragma: no cover
    main()
