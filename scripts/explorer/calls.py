"""The explorer's line to knowhow: a real `knowhow serve` over stdio, and counted tool calls.

Every call an agent makes for a task counts against the task's budget (launch included; the
closing `mm_cleanup` does not, it is bookkeeping). A call that would go past the budget raises
`BudgetExhausted` instead of being made, and each call is bounded in time, so a task that
cannot be completed is reported as such and never hangs.
"""

import os
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

CALL_TIMEOUT_S = 60.0
"""Far longer than any timeout the explorer gives a browser tool (navigation 15 s, actions 3 s,
the success check 5 s): a call still unanswered then means the server is stuck."""


def knowhow_command() -> list[str]:
    """The installed `knowhow` console script of this interpreter's environment."""
    script = Path(sys.executable).with_name("knowhow")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", "from server.cli.entry import main; main()"]


@asynccontextmanager
async def knowhow_stdio(
    root: Path, index: Path, errlog: Path, *extra: str, cwd: Path | None = None
) -> AsyncIterator[Client]:
    """A `knowhow serve` subprocess on `root`/`index` and a connected MCP client; a root that
    does not exist yet is created (an agent's first run starts one)."""
    command, *args = knowhow_command()
    serve = ["serve", "--root", str(root), "--index", str(index), "--create-root", *extra]
    # The SDK starts servers with a minimal environment: knowhow's own settings (KNOWHOW_*, e.g.
    # a longer embedding timeout on a slow machine) are passed on; --root/--index still win.
    knowhow_env = {k: v for k, v in os.environ.items() if k.startswith("KNOWHOW_")}
    params = StdioServerParameters(
        command=command, args=[*args, *serve], cwd=str(cwd) if cwd else None, env=knowhow_env
    )
    with errlog.open("a") as log:
        async with Client(stdio_client(params, errlog=log)) as client:
            yield client


class BudgetExhausted(Exception):
    """The task's call budget is spent."""


class CallFailed(Exception):
    """The server did not answer with an envelope (a protocol problem, not a tool error)."""


@dataclass(frozen=True, slots=True)
class Call:
    tool: str
    ok: bool
    seconds: float
    error_code: str | None = None


@dataclass
class Calls:
    """Counted, time-bounded tool calls of one agent on one task."""

    client: Client
    budget: int
    made: list[Call] = field(default_factory=list)

    @property
    def count(self) -> int:
        return len(self.made)

    async def __call__(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """The tool's envelope `{"ok": …, "result" | "error": …}`; counted."""
        if self.count >= self.budget:
            raise BudgetExhausted(f"{self.budget} calls spent")
        started = time.perf_counter()
        try:
            envelope = await self.uncounted(tool, args)
        except TimeoutError:
            self.made.append(Call(tool, False, time.perf_counter() - started, "TIMEOUT"))
            raise
        error = envelope.get("error") or {}
        self.made.append(
            Call(tool, bool(envelope["ok"]), time.perf_counter() - started, error.get("code"))
        )
        return envelope

    async def uncounted(self, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        with anyio.fail_after(CALL_TIMEOUT_S):
            result = await self.client.call_tool(tool, args)
        envelope = result.structured_content
        if not isinstance(envelope, dict) or "ok" not in envelope:
            raise CallFailed(f"{tool}: no envelope in {result}")
        return envelope
