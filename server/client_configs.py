"""MCP client configs for `knowhow serve` over stdio, ready to paste: `knowhow mcp-config`.

A client starts the server with the command and arguments of its config, from a working
directory of its own and with an environment of its own: a bare `knowhow` is not on its PATH
(it lives in the project's virtualenv) and relative folders would be found, or created, wherever
the client runs. So every path here is absolute: the `knowhow` being run, the root, the index.
"""

import shlex
import sys
from pathlib import Path
from typing import Any

SERVER_NAME = "knowhow"


def knowhow_executable() -> Path:
    """The absolute path of the `knowhow` console script of this environment (the one being
    run, when it was started some other way, e.g. `python -m server.cli`)."""
    script = Path(sys.executable).with_name("knowhow")
    return script if script.is_file() else Path(sys.argv[0]).absolute()


def client_configs(root: Path, index: Path) -> dict[str, Any]:
    """For each common client, where its config lives and what to put there."""
    command = str(knowhow_executable())
    args = ["serve", "--root", str(root.absolute()), "--index", str(index.absolute())]
    server = {"command": command, "args": args}
    return {
        "command": command,
        "args": args,
        "clients": {
            "claude-code": {
                "title": "Claude Code",
                "file": ".mcp.json at the root of your project",
                "config": {"mcpServers": {SERVER_NAME: server}},
                "command": f"claude mcp add {SERVER_NAME} -- {shlex.join([command, *args])}",
            },
            "claude-desktop": {
                "title": "Claude Desktop",
                "file": "claude_desktop_config.json (Settings > Developer > Edit Config)",
                "config": {"mcpServers": {SERVER_NAME: server}},
            },
            "cursor": {
                "title": "Cursor",
                "file": ".cursor/mcp.json in your project, or ~/.cursor/mcp.json for every project",
                "config": {"mcpServers": {SERVER_NAME: server}},
            },
            "vscode": {
                "title": "VS Code",
                "file": ".vscode/mcp.json in your workspace",
                "config": {"servers": {SERVER_NAME: {"type": "stdio", **server}}},
            },
        },
    }
