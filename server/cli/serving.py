"""`knowhow serve`: the knowledge and browser tools over MCP (stdio, or streamable HTTP), and
`knowhow mcp-config`: a client config that starts it, ready to paste.

The server, the browser tools and the MCP SDK are imported when `serve` runs, so the other
commands never load them.
"""

import errno
import json
import socket
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape

from engine import InvalidInput, KnowhowError, NotFound
from server.cli.answer import Answer, Call, answers, existing_root, knowledge_root
from server.cli.options import HostOpt, IndexOpt, PortOpt, RootOpt, TokenOpt
from server.cli.render import err
from server.client_configs import client_configs
from server.gc_policy import settle_for_searching


def serve(
    transport: Annotated[
        str | None, typer.Option("--transport", help="'stdio' (default) or 'http'")
    ] = None,
    host: HostOpt = None,
    port: PortOpt = None,
    token: TokenOpt = None,
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
    allow_file_urls: Annotated[
        bool,
        typer.Option(
            "--allow-file-urls",
            help="Let the browser tools open file:// URLs (env KNOWHOW_ALLOW_FILE_URLS)",
        ),
    ] = False,
    create_root: Annotated[
        bool,
        typer.Option("--create-root", help="Create the knowledge root when it does not exist"),
    ] = False,
    verbose: Annotated[
        int, typer.Option("-v", "--verbose", count=True, help="-v info, -vv debug (stderr)")
    ] = 0,
) -> None:
    """Serve the knowledge tools over MCP: stdio by default, streamable HTTP with --transport."""
    from server.app import serve as run_server
    from server.browser import InvalidScreenRules, load_screen_rules
    from server.cli.served import ServedCli
    from server.settings import ServerSettings
    from server.transport.http import UnsafeBinding

    given: dict[str, Any] = {"transport": transport, "host": host, "port": port, "token": token}
    given |= {"tool_prefix": tool_prefix, "root": root, "index": index_dir}
    given |= {"chromium": chromium, "screen_rules": screen_rules}
    given |= {"allow_file_urls": allow_file_urls or None}  # unset: the environment decides
    try:
        settings = ServerSettings(**{k: v for k, v in given.items() if v is not None})
        load_screen_rules(settings.screen_rules)  # a bad rules file is reported, not a traceback
        settings.synonym_table()  # and so is a bad synonyms file
        if settings.transport == "http":
            ports_free({"--port (KNOWHOW_PORT)": settings.port}, settings.host)
        if create_root:
            settings.root.mkdir(parents=True, exist_ok=True)
        elif not settings.root.is_dir():  # never an empty root made where a client happens to run
            raise NotFound(
                f"knowledge root {settings.root} does not exist; pass --root with the folder "
                "that holds the session folders (absolute: a client starts the server in a "
                "folder of its own), or --create-root to start an empty one there"
            )
        knowledge_root(settings)  # not a folder of other folders, as /etc
        settle_for_searching()
        if settings.transport == "http":  # the `knowhow` script's commands answered here too
            served = ServedCli(settings)
            run_server(settings, verbose, served.attach, served.routes())
        else:
            run_server(settings, verbose)
    except KnowhowError as exc:
        err.print("[red]cannot serve[/red]:", escape(f"{exc.code}: {exc.message}"))
        raise typer.Exit(2) from None
    except ValidationError as exc:
        err.print("[red]cannot serve[/red]:", escape(_bad_setting(exc, given)))
        raise typer.Exit(2) from None
    except (UnsafeBinding, InvalidScreenRules) as exc:
        err.print("[red]cannot serve[/red]:", escape(str(exc)))
        raise typer.Exit(2) from None


def _bad_setting(exc: ValidationError, options: dict[str, Any]) -> str:
    """The first bad setting in one line, by its option and environment variable (pydantic's
    report is four lines and a URL)."""
    first = exc.errors()[0]
    field = str(first["loc"][0]) if first["loc"] else "settings"
    env = f"KNOWHOW_{field.upper()}"
    named = f"--{field.replace('_', '-')} ({env})" if field in options else env
    return f"MM_INVALID_INPUT: {named}: {first['msg']}"


@answers()
def mcp_config(*, call: Call) -> Answer:
    """Print MCP client configs that start `knowhow serve` on this root and index, with
    absolute paths, ready to paste: Claude Code, Claude Desktop, Cursor, VS Code."""
    configs = client_configs(existing_root(call.settings), call.settings.index)
    return configs, partial(_show_configs, configs)


def _show_configs(configs: dict[str, Any]) -> None:
    """Each client's config as a JSON block of its own (copy it whole), where it goes, and the
    command that adds it to Claude Code."""
    lines = []
    for client in configs["clients"].values():
        lines += ["", f"{client['title']}: in {client['file']}"]
        if "command" in client:
            lines += [f"  or run: {client['command']}"]
        lines += [json.dumps(client["config"], indent=2)]
    sys.stdout.write("\n".join(lines[1:]) + "\n")


def ports_free(ports: dict[str, int], host: str = "127.0.0.1") -> None:
    """Each port can be bound on `host`, else `MM_INVALID_INPUT` naming the option (and
    environment variable) that sets it, as a bad setting is named (said before anything
    starts, not as a server's traceback after its banner)."""
    host = host.strip("[]")
    for option, port in ports.items():
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        with socket.socket(family, socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind((host, port))
            except OSError as exc:
                raise InvalidInput(option, _unbindable(port, host, exc)) from None


def _unbindable(port: int, host: str, exc: OSError) -> str:
    """Why `port` cannot be bound on `host`, and what to do."""
    if exc.errno == errno.EADDRINUSE:
        return (
            f"port {port} on {host} is in use ({exc.strerror}): stop what listens there "
            "(another knowhow server or demo?) or choose another port"
        )
    return f"port {port} on {host} cannot be bound ({exc.strerror}): choose another port or host"
