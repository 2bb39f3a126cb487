"""The demo wallet app (server/demo_app) served on localhost: for `make run` and the tests."""

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

DEMO_APP = Path(__file__).parent / "demo_app"


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        """No access log: stdout may be the MCP protocol, stderr is for knowhow's own logs."""


@contextmanager
def demo_app(port: int = 0) -> Iterator[str]:
    """The demo wallet served on 127.0.0.1 (a free port by default); yields its base URL."""
    handler = partial(_QuietHandler, directory=str(DEMO_APP))
    httpd = ThreadingHTTPServer(("127.0.0.1", port), handler)
    thread = threading.Thread(target=httpd.serve_forever, name="demo-app", daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join(5)
