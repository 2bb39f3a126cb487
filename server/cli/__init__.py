"""The `knowhow` command line, one module per group of commands.

`entry` is the `knowhow` script: standard library only, so `--version` and a command a running
server answers (`client`, `endpoint`) start in a few tens of milliseconds; anything else loads
`commands`, the Typer app. `options` declares the options several commands share, `answer` is
the one skeleton of a command that answers once (settings from --root / --index, errors as exit
status 2, the JSON envelope or a table), `render` draws tables and progress. The commands:
`indexing` (index, reindex, status), `reading` (search, last, sessions, summarize, timeline),
`curating` (supersede, duplicates, cluster), `batch` (batch-search), `demo`, `serving` (serve,
mcp-config) and `daemon`. Loading the CLI loads neither the MCP SDK nor the browser: `serve` and
`demo --serve` import them when they run.

`app` (the Typer app) is loaded on first use (PEP 562), so importing this package stays light.
"""

from typing import Any

__all__ = ["app"]


def __getattr__(name: str) -> Any:
    if name != "app":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from server.cli.commands import app

    return app
