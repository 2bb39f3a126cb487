"""`knowhow ui`: the web page in a browser, served by `knowhow serve --transport http`.

When a knowhow server already answers on the address, its page is opened; otherwise one is
started (in this process, until Ctrl-C) and the page opened once it listens. Where no browser
can be started (a server, a container) the URL is printed to open from elsewhere.
"""

import threading
import time
import urllib.error
import urllib.request
import webbrowser
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from server.cli.options import HostOpt, IndexOpt, PortOpt, RootOpt, TokenOpt

START_SECONDS = 60.0
"""How long the page waits for its server to listen before saying so."""


def ui(
    host: HostOpt = None,
    port: PortOpt = None,
    token: TokenOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    open_browser: Annotated[
        bool, typer.Option("--open/--no-open", help="Open the page in a browser (default: open)")
    ] = True,
) -> None:
    """Open the web page (search, sessions, screens, charts): start `knowhow serve --transport
    http` for it unless a knowhow server already answers there."""
    from server.cli.serving import serve
    from server.settings import ServerSettings
    from server.ui import UI_PATH

    given: dict[str, Any] = {"transport": "http", "host": host, "port": port}
    try:
        settings = ServerSettings(**{k: v for k, v in given.items() if v is not None})
    except ValidationError:
        settings = None  # `serve` says which setting is wrong
    if settings is not None:
        url = f"http://{_authority(settings.host)}:{settings.port}{UI_PATH}"
        if _answers(url):
            _show(url, open_browser)
            return
        waiter = threading.Thread(target=_show_when_up, args=(url, open_browser), daemon=True)
        waiter.start()
    serve(transport="http", host=host, port=port, token=token, root=root, index_dir=index_dir)


def _authority(host: str) -> str:
    """The host as a URL names it (an IPv6 address in brackets)."""
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


def _answers(url: str) -> bool:
    """Whether a knowhow page answers at `url` (any HTTP answer from a server that knows /ui)."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return b"knowhow-page" in response.read(4096)
    except urllib.error.HTTPError as exc:
        return exc.code in (401, 421)  # a guarded knowhow server
    except (OSError, ValueError):
        return False


def _show_when_up(url: str, open_browser: bool) -> None:
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if _answers(url):
            _show(url, open_browser)
            return
        time.sleep(0.2)
    typer.echo(f"the server did not answer at {url} within {START_SECONDS:.0f} s", err=True)


def _show(url: str, open_browser: bool) -> None:
    typer.echo(f"knowhow's page: {url}")
    if open_browser and not webbrowser.open(url):
        typer.echo("no browser to open here: open the address above in one", err=True)
