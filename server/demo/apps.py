"""Apps served on localhost for `make run`, the tests and the benchmarks.

The demo wallet (server/demo/demo_app) and MetaMask's own `@metamask/test-dapp` (installed by
`make test-dapp` into vendor/). The test dapp is inert without a wallet, so its served
index.html carries one more script of the page: knowhow's EIP-1193 test provider
(server/demo/test_dapp/provider.js). The page loads it like any of its own scripts; knowhow's
browser tools still never inject anything.
"""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEMO_APP = Path(__file__).parent / "demo_app"
TEST_DAPP_VERSION = "9.9.0"
TEST_DAPP_DIST = (
    Path(__file__).resolve().parents[2]
    / "vendor"
    / "test-dapp"
    / "node_modules"
    / "@metamask"
    / "test-dapp"
    / "dist"
)
PROVIDER_SCRIPT = Path(__file__).parent / "test_dapp" / "provider.js"
PROVIDER_PATH = "/knowhow-test-provider.js"
TEST_DAPP_CSP = "default-src 'self' 'unsafe-inline' 'unsafe-eval' data: blob:"
"""Sent with every test-dapp response: the page may load and call only its own origin. On load
the dapp reaches for WalletConnect, MetaMask's SDK API, Google Fonts and a CDN; refused at once
by the browser, runs are fast and repeatable offline or not, and nothing is added to the page.
(Inline and eval stay allowed: the dapp's bundle needs them.)"""


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log: stdout may be the MCP protocol, stderr is for knowhow's own logs."""


class _TestDappHandler(_QuietHandler):
    """Serves the test dapp's dist/, with the test provider as the first script of index.html
    and a same-origin-only Content-Security-Policy."""

    def end_headers(self) -> None:
        self.send_header("Content-Security-Policy", TEST_DAPP_CSP)
        super().end_headers()

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0].split("#", 1)[0]
        if path == PROVIDER_PATH:
            self._send(PROVIDER_SCRIPT.read_bytes(), "text/javascript; charset=utf-8")
        elif path in ("/", "/index.html"):
            self._send(served_index_html(Path(self.directory)), "text/html; charset=utf-8")
        else:
            super().do_GET()

    def _send(self, body: bytes, content_type: str) -> None:
        self.send_response(200)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.end_headers()
        self.wfile.write(body)


def served_index_html(dist: Path) -> bytes:
    """The dapp's index.html with the provider script first in <head>, before the dapp's own
    (deferred) scripts, so `window.ethereum` exists when they run."""
    html = (dist / "index.html").read_text(encoding="utf-8")
    tag = f'<script src="{PROVIDER_PATH}"></script>'
    if "<head>" not in html:
        raise ValueError(f"{dist / 'index.html'} has no <head>: not the test dapp's build")
    return html.replace("<head>", "<head>\n    " + tag, 1).encode("utf-8")


@contextmanager
def _serve(handler: Any, name: str, port: int) -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=httpd.serve_forever, name=name, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)


@contextmanager
def demo_app(port: int = 0) -> Iterator[str]:
    """The demo wallet served on 127.0.0.1 (a free port by default); yields its base URL."""
    with _serve(partial(_QuietHandler, directory=str(DEMO_APP)), "demo-app", port) as url:
        yield url


def metamask_test_dapp_installed(dist: Path = TEST_DAPP_DIST) -> bool:
    """Whether `make test-dapp` has put the built dapp in place (it needs the npm registry)."""
    return (dist / "index.html").is_file()


@contextmanager
def metamask_test_dapp(port: int = 0, dist: Path = TEST_DAPP_DIST) -> Iterator[str]:
    """MetaMask's test dapp with knowhow's test provider, served on 127.0.0.1; yields its URL."""
    if not metamask_test_dapp_installed(dist):
        raise FileNotFoundError(f"{dist} is missing: run `make test-dapp` (needs the npm registry)")
    with _serve(partial(_TestDappHandler, directory=str(dist)), "test-dapp", port) as url:
        yield url
