"""The `knowhow` command line, one module per group of commands.

`options` declares the options several commands share, `answer` is the one skeleton of a command
that answers once (settings from --root / --index, errors as exit status 2, the JSON envelope or a
table), `render` draws tables and progress. The commands: `indexing` (index, reindex, status),
`reading` (search, last, sessions, summarize, timeline), `curating` (supersede, duplicates,
cluster), `batch` (batch-search), `demo` and `serving` (serve, mcp-config). They are registered
here, in the order `knowhow --help` lists them. Loading the CLI loads neither the MCP SDK nor the
browser: `serve` and `demo --serve` import them when they run.
"""

import sys
from typing import Annotated

import typer

from server.cli import batch, curating, demo, indexing, reading, serving, ui
from server.version import knowhow_version

HELP = """`knowhow` command line: index, status, search, last, sessions, summarize, timeline,
supersede, duplicates, cluster, reindex, batch-search, demo, serve, mcp-config.

Human-readable by default, `--json` for machines. Errors print `{"ok": false, "error": …}`
(with --json) or a one-line message, and exit with status 2.
"""

app = typer.Typer(add_completion=False, no_args_is_help=True, help=HELP)


def _print_version(asked: bool) -> None:
    if asked:
        sys.stdout.write(f"knowhow {knowhow_version()}\n")
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_print_version, is_eager=True, help="Print the version and exit"
        ),
    ] = False,
) -> None:
    """Options before any command: --version."""


for command in (
    indexing.index,
    indexing.reindex,
    indexing.status,
    reading.search,
    reading.last,
    reading.sessions,
    reading.summarize,
    reading.timeline,
    curating.supersede,
    curating.duplicates,
    curating.cluster,
):
    app.command()(command)
app.command("batch-search")(batch.batch_search)
app.command()(demo.demo)
app.command()(serving.serve)
app.command("mcp-config")(serving.mcp_config)
app.command()(ui.ui)

__all__ = ["app"]
