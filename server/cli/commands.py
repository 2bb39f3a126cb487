"""The Typer app of `knowhow`: its commands registered in the order `--help` lists them, and
`run`, which runs it on a command line the way the `knowhow` script (and a server answering for
the script) does: a usage error is one line, or the error envelope with --json, and status 2.
"""

import sys
from functools import cache
from typing import Annotated

import typer
from typer.core import TyperGroup

from server.cli import batch, curating, demo, indexing, reading, serving
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
