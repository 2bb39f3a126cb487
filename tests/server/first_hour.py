"""A new user's first hour: the folder `make run` leaves, and MCP clients spawned as a pasted
config spawns them.

`knowhow demo` (what `make run` runs before serving) copies the bundled sample into an empty
`test-artifacts/llm-knowledge` and indexes it into `index-data`, both relative to where it runs.
A client started from a config runs `command` with `args` from *its own* working directory, with
a minimal environment: `spawned` does exactly that, so a config that works only from the clone,
or only with `knowhow` on PATH, fails here as it fails for the user.
"""

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from engine.meaning import EMBED_TIMEOUT_ENV

KNOWHOW = Path(sys.executable).with_name("knowhow")
SAMPLE_RELATIVE_ROOT = Path("test-artifacts") / "llm-knowledge"
SAMPLE_RELATIVE_INDEX = Path("index-data")
SEND_SESSION = "mm-mk7503cd-qnpu07"  # the sample's send session
SWAP_SESSION = "mm-mlfgj375-eoid2h"  # the sample's swap session


def user_env() -> dict[str, str]:
    """A new user's environment: none of knowhow's settings, except the embedding timeout a
    loaded test machine needs (see tests/conftest.py)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KNOWHOW_")}
    if EMBED_TIMEOUT_ENV in os.environ:
        env[EMBED_TIMEOUT_ENV] = os.environ[EMBED_TIMEOUT_ENV]
    return env


def knowhow(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """The venv's `knowhow` run in `cwd`, its output piped (not a terminal)."""
    return subprocess.run(
        [str(KNOWHOW), *args],
        cwd=cwd,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def knowhow_json(cwd: Path, *args: str) -> dict[str, Any]:
    """`knowhow … --json`: the envelope (exit 0 with ok true, 2 with ok false)."""
    done = knowhow(cwd, *args, "--json")
    envelope: dict[str, Any] = json.loads(done.stdout)
    assert done.returncode == (0 if envelope["ok"] else 2), (done.stdout, done.stderr)
    return envelope


def made_run(folder: Path) -> Path:
    """`folder` after `knowhow demo`: the sample copied into the default root and indexed."""
    done = knowhow(folder, "demo")
    assert done.returncode == 0, done.stderr
    assert (folder / SAMPLE_RELATIVE_ROOT / SEND_SESSION).is_dir()
    return folder


@asynccontextmanager
async def spawned(command: str, args: list[str], cwd: Path, errlog: Path) -> AsyncIterator[Client]:
    """An SDK client that starts the server as a client config says, from `cwd`."""
    env = (
        {EMBED_TIMEOUT_ENV: os.environ[EMBED_TIMEOUT_ENV]}
        if EMBED_TIMEOUT_ENV in os.environ
        else {}
    )
    params = StdioServerParameters(command=command, args=args, cwd=str(cwd), env=env)
    with errlog.open("a") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            yield client


async def envelope(client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """The envelope a tool answered with; a protocol error fails the test (no tool may answer
    outside the envelope)."""
    result = await client.call_tool(tool, args)
    content = result.structured_content
    assert isinstance(content, dict), result
    assert content["ok"] is not result.is_error, content
    return content
