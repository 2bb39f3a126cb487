"""Server test helpers: real `knowhow serve` processes, clients, a recorded send flow."""

import hashlib
import os
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from explorer import knowhow_command, knowhow_stdio

REPO = Path(__file__).resolve().parents[2]
START_TIMEOUT = 20.0
T = TypeVar("T")


def serve_args(root: Path, index: Path, *extra: str) -> list[str]:
    return ["serve", "--root", str(root), "--index", str(index), *extra]


@asynccontextmanager
async def stdio_agent(root: Path, index: Path, log: Path, *extra: str) -> AsyncIterator[Client]:
    """A `knowhow serve` subprocess over stdio and a connected SDK client."""
    async with knowhow_stdio(root, index, log, *extra, cwd=REPO) as client:
        yield client


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_http(
    root: Path, index: Path, log: Path, *extra: str, preexec: Callable[[], None] | None = None
) -> tuple[subprocess.Popen[bytes], int]:
    """`knowhow serve --transport http` on a free port; returns once it accepts connections
    (`preexec` runs in the child before it starts, e.g. to lower a resource limit)."""
    port = free_port()
    args = [
        *knowhow_command(),
        *serve_args(root, index, "--transport", "http", "--port", str(port)),
    ]
    with log.open("a") as errlog:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [*args, *extra],
            cwd=REPO,
            stderr=errlog,
            stdout=subprocess.DEVNULL,
            preexec_fn=preexec,
        )
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}: {log.read_text()[-2000:]}")
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return proc, port
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise RuntimeError(f"server did not listen on {port}: {log.read_text()[-2000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(5)


@asynccontextmanager
async def http_client(
    port: int, headers: dict[str, str] | None = None, *, mode: str = "auto"
) -> AsyncIterator[Client]:
    """`mode="legacy"`: the session-ful protocol (an `mcp-session-id` per client), as clients
    of the 2025 protocol versions speak it; "auto" speaks the stateless 2026 one."""
    http = httpx2.AsyncClient(headers=headers or {}, timeout=httpx2.Timeout(30, read=60))
    async with http:
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http)
        async with Client(transport, mode=mode) as client:
            yield client


async def call(client: Client, name: str, args: dict[str, Any]) -> dict[str, Any]:
    """The envelope a tool returned, checked for consistency with `is_error`."""
    result = await client.call_tool(name, args)
    envelope = result.structured_content
    assert isinstance(envelope, dict), result
    assert envelope["ok"] is not result.is_error
    return envelope


async def ok(client: Client, name: str, args: dict[str, Any]) -> Any:
    envelope = await call(client, name, args)
    assert envelope["ok"], envelope
    return envelope["result"]


async def eventually(check: Callable[[], Awaitable[T | None]], timeout: float = 90.0) -> T:
    """Poll `check` until it returns something truthy (then return it) or time runs out.

    The timeout is generous so a loaded CI machine cannot fail a test (30 s was once too short
    for the live index to report a skipped link on a machine at load 12); a passing check
    returns at once, so only a failing test waits it out. Speed is for benchmarks."""
    deadline = time.monotonic() + timeout
    while True:
        value = await check()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout}s")
        await anyio.sleep(0.05)


def disk_snapshot(root: Path, ignore: Path | None = None) -> dict[str, str]:
    """Every file under `root` with a digest of its content (to prove nothing changed).

    `ignore` leaves out a folder whose content changes by itself, such as the index directory
    that the server's live indexer commits to in the background after earlier, valid calls.
    """
    if not root.exists():
        return {}
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.rglob("*"))
        if p.is_file() and (ignore is None or not p.is_relative_to(ignore))
    }


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


# -- a recorded MetaMask send flow, with one failure and its recovery ------------------------
EXT = "chrome-extension://lfmgnbpjhgbklpjkdpkfdgfmkajcfbae/home.html"


def _obs(
    screen: str, route: str, test_ids: list[tuple[str, str]], nodes: list[tuple[str, str]]
) -> dict[str, Any]:
    return {
        "state": {"currentScreen": screen, "currentUrl": f"{EXT}#{route}", "isUnlocked": True},
        "testIds": [
            {"testId": t, "tag": "button", "text": x, "visible": True} for t, x in test_ids
        ],
        "a11y": {
            "nodes": [
                {"ref": f"e{i}", "role": r, "name": n, "path": []}
                for i, (r, n) in enumerate(nodes, 1)
            ]
        },
    }


HOME = _obs(
    "home",
    "/",
    [("coin-overview-send", "Send"), ("coin-overview-swap", "Swap"), ("account-menu-icon", "")],
    [("button", "Send"), ("button", "Swap"), ("button", "Account 1")],
)
SEND = _obs(
    "send",
    "/send",
    [
        ("recipient-address-input", ""),
        ("send-amount-input", ""),
        ("send-page-continue", "Continue"),
    ],
    [("textbox", "Recipient address"), ("textbox", "Amount"), ("button", "Continue")],
)
CONFIRM = _obs(
    "confirm-transaction",
    "/confirm-transaction",
    [("confirm-footer-button", "Confirm"), ("confirm-footer-cancel-button", "Cancel")],
    [("button", "Confirm"), ("button", "Cancel")],
)


def _step(
    tool: str, test_id: str | None, ok_: bool, observation: dict[str, Any], **extra: Any
) -> dict[str, Any]:
    step: dict[str, Any] = {
        "tool": {"name": tool},
        "outcome": {"ok": ok_},
        "observation": observation,
    }
    if test_id:
        step["tool"]["target"] = {"testId": test_id}
        step["tool"]["input"] = {"testId": test_id, **extra}
    return step


SEND_FLOW: list[dict[str, Any]] = [
    _step("mm_describe_screen", None, True, HOME),
    _step("mm_click", "coin-overview-send", True, SEND),
    _step(
        "mm_type",
        "recipient-address-input",
        True,
        SEND,
        text="0x2f318C334780961FB129D2a6c30D0763d9a5C970",
    ),
    _step("mm_type", "send-amount-input", True, SEND, text="0.01"),
    _step("mm_click", "send-page-continue", True, CONFIRM),
    {
        **_step("mm_click", "confirm-footer-button", False, CONFIRM),
        "outcome": {
            "ok": False,
            "error": {
                "code": "MM_TARGET_NOT_FOUND",
                "message": "confirm-footer-button not visible yet",
            },
        },
    },
    _step("mm_wait_for", "confirm-footer-button", True, CONFIRM),
    _step("mm_click", "confirm-footer-button", True, HOME),
]

SWAP_FLOW: list[dict[str, Any]] = [
    _step("mm_describe_screen", None, True, HOME),
    _step(
        "mm_click",
        "coin-overview-swap",
        True,
        _obs("swap", "/swaps", [("swap-button", "Swap")], [("button", "Swap")]),
    ),
]
