"""The Typer app of `knowhow`: its commands registered in the order `--help` lists them, and
`run`, which runs it on a command line the way the `knowhow` script (and a server answering for
the script) does: a usage error is one line, or the error envelope with --json, and status 2.
"""

import sys
from collections.abc import Callable
from functools import cache
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from server.cli import batch, curating, daemon, demo, indexing, reading, serving, ui
from server.cli.catalog import COMMANDS, HELP
from server.version import knowhow_version

app = typer.Typer(add_completion=False, no_args_is_help=True, help=HELP, rich_markup_mode=None)
"""Plain help (Click's): no framed boxes, no type tags on flags."""


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


class PlainUsage(TyperCommand):
    """A usage line as Click writes it: `knowhow search [OPTIONS] QUERY`, not `{QUERY}`."""

    def collect_usage_pieces(self, ctx: Any) -> list[str]:  # Click's Context
        pieces = super().collect_usage_pieces(ctx)
        return [p[1:-1] if p.startswith("{") and p.endswith("}") else p for p in pieces]


BODIES: dict[str, Callable[..., None]] = {
    "index": indexing.index,
    "reindex": indexing.reindex,
    "status": indexing.status,
    "search": reading.search,
    "last": reading.last,
    "sessions": reading.sessions,
    "summarize": reading.summarize,
    "timeline": reading.timeline,
    "supersede": curating.supersede,
    "duplicates": curating.duplicates,
    "cluster": curating.cluster,
    "batch-search": batch.batch_search,
    "demo": demo.demo,
    "serve": serving.serve,
    "daemon": daemon.daemon,
    "mcp-config": serving.mcp_config,
    "ui": ui.ui,
}
for name, summary in COMMANDS.items():
    app.command(name, short_help=summary, cls=PlainUsage)(BODIES[name])


@cache
def click_command() -> TyperGroup:
    """The app as Click runs it, made once (a server answering the script runs it often)."""
    command = typer.main.get_command(app)
    assert isinstance(command, TyperGroup)  # an app of several commands is a group
    return command


def run(argv: list[str]) -> int:
    """Run the command line `argv` (without the program name); its exit status. A usage error
    (an unknown option, `--limit abc`) is reported as any other bad input: the error envelope
    with --json, one line without (and where --help tells more), never a framed box."""
    try:
        code = click_command().main(args=argv, prog_name="knowhow", standalone_mode=False)
    except typer.Abort:
        sys.stderr.write("aborted\n")
        return 1
    except typer.TyperException as exc:
        if exc.exit_code != 2:  # not a usage error: a file Click could not open …
            sys.stderr.write(f"{exc.format_message()}\n")
            return exc.exit_code
        _usage_failed(exc, as_json="--json" in argv)
        return 2
    return code if isinstance(code, int) else 0


def _usage_failed(exc: typer.TyperException, as_json: bool) -> None:
    """`MM_INVALID_INPUT: knowhow search: Invalid value for '--limit' / '-k': …`, on stdout as
    the envelope (--json) or on stderr as one line naming the --help to read."""
    import orjson

    from engine import InvalidInput
    from server.envelope import envelope

    context = getattr(exc, "ctx", None)  # Click's UsageError knows the command
    where = context.command_path if context is not None else "knowhow"
    message = " ".join(exc.format_message().split())
    if as_json:
        error = InvalidInput(where, message)
        sys.stdout.write(orjson.dumps(envelope(error)).decode() + "\n")
    else:
        sys.stderr.write(f"MM_INVALID_INPUT: {where}: {message} (see {where} --help)\n")
