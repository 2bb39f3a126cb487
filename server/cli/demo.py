"""`knowhow demo`, what `make run` runs: index the knowledge root (an empty one gets the bundled
sample sessions first), show example searches, and with --serve serve MCP over HTTP beside the
demo wallet."""

import os
import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from engine import KnowledgeStore, SearchInput, Settings, ensure_index
from server.cli.answer import open_engine, run, settings_for
from server.cli.options import IndexOpt, RootOpt
from server.cli.render import out, progress, steps_table, sync_report
from server.cli.serving import ports_free
from server.client_configs import client_configs
from server.settings import DEMO_APP_PORT

DEMO_QUERIES = (
    "send flow ETH to another account",
    "click confirm",
    "sned eth",
    "coin-overview",
)


def demo(
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    serve_mcp: Annotated[
        bool, typer.Option("--serve", help="Then serve MCP over HTTP and the demo wallet app")
    ] = False,
    port: Annotated[int, typer.Option("--port", help="MCP HTTP port")] = 8765,
    app_port: Annotated[
        int, typer.Option("--app-port", help="Demo wallet app port")
    ] = DEMO_APP_PORT,
) -> None:
    """Index the knowledge root and show example searches (an empty root gets the bundled sample
    sessions first); with --serve, then serve MCP over HTTP and the demo wallet app."""
    from server.demo import SAMPLE_ROOT

    settings = settings_for(root, index_dir)
    if serve_mcp:  # before anything is printed: no banner for a server that cannot start
        run(False, lambda: ports_free({"--port": port, "--app-port": app_port}))
    store = KnowledgeStore(settings.root)
    if not store.session_ids():
        shutil.copytree(SAMPLE_ROOT, settings.root, dirs_exist_ok=True)
        out.print(f"[yellow]{settings.root} was empty: copied the bundled sample sessions[/yellow]")
    with progress("indexing", False) as advance:
        report = run(False, lambda: ensure_index(store, settings.index, advance))
    sync_report(report)
    engine = open_engine(settings)
    for text in DEMO_QUERIES:
        page = engine.search(SearchInput(query=text, limit=3))
        steps_table(f"search {text!r}", page.steps(), page.total)
    knowhow = _how_to_run()
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


def _how_to_run() -> str:
    """How to run knowhow from here: `knowhow` when that is on PATH (or cannot be told), else
    the path this one was started by (`.venv/bin/knowhow` after `make run`)."""
    started = Path(sys.argv[0])
    on_path = shutil.which("knowhow")
    if started.name != "knowhow" or (on_path and Path(on_path).resolve() == started.resolve()):
        return "knowhow"
    return os.path.relpath(started.resolve()) if started.is_absolute() else str(started)


def _serve_demo(settings: Settings, port: int, app_port: int) -> None:
    from server.app import serve as run_server
    from server.cli.served import ServedCli
    from server.demo import demo_app
    from server.settings import ServerSettings

    server_settings = ServerSettings(
        root=settings.root, index=settings.index, transport="http", port=port
    )
    served = ServedCli(server_settings)  # the `knowhow` commands of this root answered here too
    knowhow = _how_to_run()
    claude = client_configs(settings.root, settings.index)["clients"]["claude-code"]["command"]
    with demo_app(app_port) as app_url:
        out.print(
            f"\n[bold]MCP server[/bold]: http://127.0.0.1:{port}/mcp (streamable HTTP)\n"
            f'  client config while this runs: {{"url": "http://127.0.0.1:{port}/mcp"}}\n'
            f"  over stdio, for Claude Code (the client starts the server itself):\n"
            f"    {escape(claude)}\n"
            f"  for Claude Desktop, Cursor and VS Code: {knowhow} mcp-config\n"
            f"[bold]Web page[/bold]: http://127.0.0.1:{port}/ui/ ({knowhow} search … is "
            "answered by this server while it runs)\n"
            f"[bold]Demo wallet[/bold]: {app_url} (password in server/demo/demo_app/README.md);\n"
            f'  try mm_launch {{"url": "{app_url}", "flowTags": ["send"]}}, then '
            "mm_describe_screen.\nCtrl-C stops both.",
            soft_wrap=True,
        )
        run_server(server_settings, 0, served.attach, served.routes())
