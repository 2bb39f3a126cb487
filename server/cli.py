"""`knowhow` command line: index, search, last, sessions, summarize, timeline, supersede, reindex,
batch-search, demo.

Human-readable by default, `--json` for machines. Errors print `{"ok": false, "error": …}`
(with --json) or a one-line message, and exit with status 2.
"""

import json
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn, TypeVar

import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from engine import (
    KnowhowError,
    KnowledgeEngine,
    KnowledgeStore,
    LastInput,
    Result,
    SearchInput,
    SearchPage,
    SessionList,
    SessionRecipe,
    SessionsInput,
    Settings,
    StepList,
    SummarizeInput,
    SupersedeInput,
    SyncReport,
    TimelineInput,
    ensure_index,
    rebuild,
    supersede_step,
    validate,
)
from server.envelope import envelope

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)
out = Console()
err = Console(stderr=True)

RootOpt = Annotated[Path | None, typer.Option("--root", help="Knowledge root [env KNOWHOW_ROOT]")]
IndexOpt = Annotated[Path | None, typer.Option("--index", help="Index dir [env KNOWHOW_INDEX]")]
JsonOpt = Annotated[bool, typer.Option("--json", help="Machine-readable JSON output")]
ScopeOpt = Annotated[str, typer.Option("--scope", help="'all', 'current' or a session id")]
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
AfterOpt = Annotated[str | None, typer.Option("--after", help="Steps at or after (ISO time)")]
BeforeOpt = Annotated[str | None, typer.Option("--before", help="Steps before (ISO time)")]

T = TypeVar("T")


def _settings(root: Path | None, index: Path | None) -> Settings:
    settings = Settings()
    updates: dict[str, Any] = {}
    if root is not None:
        updates["root"] = root
    if index is not None:
        updates["index"] = index
    return settings.model_copy(update=updates)


def _engine(settings: Settings) -> KnowledgeEngine:
    return KnowledgeEngine(settings.root, settings.index, synonyms=settings.synonym_table())


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


@app.command()
def index(root: RootOpt = None, index_dir: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Bring the index up to date with the knowledge root (builds it the first time)."""
    settings = _settings(root, index_dir)
    with _progress("indexing", as_json) as progress:
        report = _run(
            as_json, lambda: ensure_index(KnowledgeStore(settings.root), settings.index, progress)
        )
    _report(report, as_json)


@app.command()
def reindex(root: RootOpt = None, index_dir: IndexOpt = None, as_json: JsonOpt = False) -> None:
    """Rebuild the index from the files into a new generation and swap it in atomically."""
    settings = _settings(root, index_dir)
    with _progress("rebuilding", as_json) as progress:
        report = _run(
            as_json, lambda: rebuild(KnowledgeStore(settings.root), settings.index, progress)
        )
    _report(report, as_json)


def _render_steps(title: str, steps: list[Any], total: int, extra: str = "") -> None:
    table = Table(title=f"{title} ({total} in all{extra})", show_lines=False)
    for column in ("#", "score", "session / step", "tool", "screen", "snippet"):
        table.add_column(column, overflow="fold")
    for rank, step in enumerate(steps, 1):
        score = f"{step.score:.1f}" if step.score is not None else ""
        mark = "" if step.ok else " [red]✗[/red]"
        table.add_row(str(rank), score, step.stepId, step.tool + mark, step.screen, step.snippet)
    out.print(table)


@app.command()
def search(
    query: Annotated[str, typer.Argument(help="What you are looking for, in any words")],
    limit: Annotated[int, typer.Option("--limit", "-k")] = 20,
    offset: Annotated[int, typer.Option("--offset")] = 0,
    scope: ScopeOpt = "all",
    flow_tag: FlowOpt = None,
    tag: TagOpt = None,
    screen: ScreenOpt = None,
    since_hours: SinceOpt = None,
    git_branch: BranchOpt = None,
    ok: OkOpt = None,
    tool: ToolOpt = None,
    after: AfterOpt = None,
    before: BeforeOpt = None,
    session: SessionOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Search steps of all sessions (or one scope), best first, with match evidence."""
    settings = _settings(root, index_dir)

    def run() -> SearchPage:
        request = validate(
            SearchInput,
            {
                "query": query,
                "limit": limit,
                "offset": offset,
                "scope": _scope(scope),
                "filters": _filters(
                    flowTag=flow_tag,
                    tag=tag,
                    screen=screen,
                    sinceHours=since_hours,
                    gitBranch=git_branch,
                    ok=ok,
                    tool=tool,
                    after=after,
                    before=before,
                ),
            },
        )
        engine = _engine(settings)
        return engine.search(request, current_session=_current(engine, settings, session))

    page = _run(as_json, run)

    def render() -> None:
        more = f", next: --offset {page.offset + page.limit}" if page.hasMore else ""
        _render_steps(f"search {page.query!r}", page.results, page.total, more)
        if page.hint:
            out.print(page.hint)

    _emit(page, as_json, render)


@app.command()
def last(
    n: Annotated[int, typer.Option("-n")] = 20,
    scope: ScopeOpt = "current",
    flow_tag: FlowOpt = None,
    tag: TagOpt = None,
    screen: ScreenOpt = None,
    since_hours: SinceOpt = None,
    git_branch: BranchOpt = None,
    ok: OkOpt = None,
    tool: ToolOpt = None,
    session: SessionOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """The last N steps of the current session (or of a scope), oldest first."""
    settings = _settings(root, index_dir)

    def run() -> StepList:
        request = validate(
            LastInput,
            {
                "n": n,
                "scope": _scope(scope),
                "filters": _filters(
                    flowTag=flow_tag,
                    tag=tag,
                    screen=screen,
                    sinceHours=since_hours,
                    gitBranch=git_branch,
                    ok=ok,
                    tool=tool,
                ),
            },
        )
        engine = _engine(settings)
        return engine.last(request, current_session=_current(engine, settings, session))

    steps = _run(as_json, run)
    _emit(steps, as_json, lambda: _render_steps("last steps", steps.steps, steps.total))


@app.command()
def sessions(
    limit: Annotated[int, typer.Option("--limit", "-k")] = 10,
    flow_tag: FlowOpt = None,
    tag: TagOpt = None,
    since_hours: SinceOpt = None,
    git_branch: BranchOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    as_json: JsonOpt = False,
) -> None:
    """Recent sessions, newest first, with goal, tags, branch and step counts."""
    settings = _settings(root, index_dir)

    def run() -> SessionList:
        request = validate(
            SessionsInput,
            {
                "limit": limit,
                "filters": _filters(
                    flowTag=flow_tag, tag=tag, sinceHours=since_hours, gitBranch=git_branch
                ),
            },
        )
        return _engine(settings).sessions(request)

    found = _run(as_json, run)

    def render() -> None:
        table = Table(title=f"sessions ({found.total} in all)")
        for column in ("session", "created", "flowTags", "tags", "goal", "steps", "failed"):
            table.add_column(column, overflow="fold")
        for s in found.sessions:
            table.add_row(
                s.sessionId,
                s.createdAt,
                ", ".join(s.flowTags),
                ", ".join(s.tags),
                s.goal or "",
                str(s.stepCount),
                str(s.failedStepCount),
            )
        out.print(table)

    _emit(found, as_json, render)


@app.command()
def summarize(
    session_id: Annotated[str | None, typer.Argument(help="Session id (default: --scope)")] = None,
    scope: ScopeOpt = "current",
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
        out.print(f"[bold]{s.sessionId}[/bold]  {s.createdAt}  goal: {s.goal or '-'}")
        out.print(f"flowTags: {', '.join(s.flowTags) or '-'}  steps: {s.stepCount}")
        out.print("screens: " + " → ".join(recipe.screens))
        for a in recipe.actions:
            text = f" text={a.text!r}" if a.text else ""
            out.print(f"  ✓ {a.tool} on {a.screen}: {a.target or '-'}{text}")
        for f in recipe.failures:
            fix = (
                f" → recovered by {f.recoveredBy.tool} {f.recoveredBy.target}"
                if f.recoveredBy
                else ""
            )
            out.print(
                f"  [red]✗[/red] {f.tool} on {f.screen}: {f.target or '-'} ({f.errorCode}){fix}"
            )

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
            out.print(f"{mark} {step.timestamp}  {step.stepId}  {step.snippet}{ok}{flag}")
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


@app.command("batch-search")
def batch_search(
    queries: Annotated[Path, typer.Option("--queries", help="JSONL with {qid, query} lines")],
    run_file: Annotated[Path, typer.Option("--run", help="TREC run file to write")],
    k: Annotated[int, typer.Option("--k", help="Results per query (1..100)")] = 100,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
) -> None:
    """Answer every query of a file with one loaded index; write a TREC run, print latencies."""
    settings = _settings(root, index_dir)
    engine = _run(False, lambda: _engine(settings))
    latencies: list[float] = []
    with run_file.open("w", encoding="utf-8") as handle:
        for line in queries.read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            item = json.loads(line)
            try:
                request = validate(SearchInput, {"query": item.get("query", ""), "limit": k})
            except KnowhowError as exc:
                err.print(f"[yellow]skipped query {item.get('qid')!r}[/yellow]: {exc.message}")
                continue
            started = time.perf_counter()
            page = _run(False, lambda r=request: engine.search(r))  # type: ignore[misc]
            latencies.append((time.perf_counter() - started) * 1000)
            for rank, hit in enumerate(page.results, 1):
                handle.write(f"{item['qid']} Q0 {hit.stepId} {rank} {hit.score} knowhow\n")
    sys.stdout.write(json.dumps(_percentiles(latencies)) + "\n")


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


SAMPLE_ROOT = Path(__file__).parent / "sample_root"
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
        _render_steps(f"search {text!r}", page.results, page.total)
    out.print(f"Try: knowhow search 'your words' --root {settings.root} --index {settings.index}")
    if serve_mcp:
        _serve_demo(settings, port, app_port)


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
            f"  or over stdio: knowhow serve --root {settings.root} --index {settings.index}\n"
            f"[bold]Demo wallet[/bold]: {app_url} (password in server/demo_app/README.md);\n"
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
        run_server(settings, verbose)
    except (ValidationError, UnsafeBinding, InvalidScreenRules) as exc:
        err.print("[red]cannot serve[/red]:", escape(str(exc)))
        raise typer.Exit(2) from None


if __name__ == "__main__":  # pragma: no cover
    main()
