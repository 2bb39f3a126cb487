"""The command line starts light: loading it leaves the MCP SDK, the browser automation, the
server and the demo apps unloaded, so a search from the shell pays for none of them. `serve`
and `demo --serve` import them when they run."""

import json
import subprocess
import sys

HEAVY = ("mcp", "playwright", "uvicorn", "starlette", "http.server")
SERVER_PARTS = ("server.app", "server.state", "server.tools", "server.browser", "server.demo")

PROBE = f"""
import json, sys
import server.cli
heavy = {HEAVY + SERVER_PARTS!r}
print(json.dumps(sorted(m for m in sys.modules if m.startswith(heavy))))
"""


def test_loading_the_cli_loads_neither_the_server_nor_the_mcp_sdk() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert json.loads(done.stdout) == []
