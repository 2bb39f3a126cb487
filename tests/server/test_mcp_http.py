"""The same over streamable HTTP, with two live server processes on one root and index.

Agent A's server holds the writer lease; agent B's serves read-only and sees A's steps as they
are recorded. When A's process is SIGKILLed, B takes the lease over and indexes new steps.
Off loopback, the server refuses to start without a token and rejects calls without it.
"""

import os
import signal
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.server.mcp_helpers import (
    SEND_FLOW,
    call,
    eventually,
    http_client,
    knowhow_command,
    ok,
    serve_args,
    start_http,
    stop,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
MCP_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
INIT = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'


async def test_two_http_servers_share_knowledge_and_fail_over(
    root: Path, index: Path, log: Path
) -> None:
    proc_a, port_a = start_http(root, index, log)
    proc_b, port_b = None, 0
    try:
        async with http_client(port_a) as a:
            status_a = await ok(a, "mm_knowledge_status", {})
            assert status_a["isWriter"] is True and status_a["writerPid"] == proc_a.pid
            proc_b, port_b = start_http(root, index, log)
            async with http_client(port_b) as b:
                status_b = await ok(b, "mm_knowledge_status", {})
                assert status_b["isWriter"] is False and status_b["writerPid"] == proc_a.pid

                started = await ok(a, "mm_knowledge_start_session", {"flowTags": ["send"]})
                send = started["sessionId"]
                for step in SEND_FLOW:
                    await ok(a, "mm_knowledge_record_step", step)
                spec_call = {"query": "send", "scope": "all", "filters": {"flowTag": "send"}}

                async def b_sees_all() -> dict[str, Any] | None:
                    page = await ok(b, "mm_knowledge_search", spec_call)
                    return page if page["total"] >= 6 else None

                page = await eventually(b_sees_all)
                assert {r["sessionId"] for r in page["results"]} == {send}
                listed = await ok(b, "mm_knowledge_sessions", {"filters": {"flowTag": "send"}})
                assert [s["sessionId"] for s in listed["sessions"]] == [send]
                recipe = await ok(b, "mm_knowledge_summarize", {"scope": {"sessionId": send}})
                assert recipe["screens"] == ["home", "send", "confirm-transaction", "home"]

                os.kill(proc_a.pid, signal.SIGKILL)
                proc_a.wait(5)

                async def b_writes() -> bool:
                    return bool((await ok(b, "mm_knowledge_status", {}))["isWriter"])

                await eventually(b_writes)
                await ok(b, "mm_knowledge_start_session", {"flowTags": ["send"]})
                recorded = await ok(b, "mm_knowledge_record_step", SEND_FLOW[1])

                async def indexed_by_b() -> bool:
                    page = await ok(b, "mm_knowledge_search", {"query": "send", "scope": "current"})
                    return recorded["stepId"] in {r["stepId"] for r in page["results"]}

                await eventually(indexed_by_b)

                async def caught_up() -> dict[str, Any] | None:
                    status = await ok(b, "mm_knowledge_status", {})
                    return status if status["indexLag"]["pendingSessions"] == 0 else None

                status_b = await eventually(caught_up)
                assert status_b["documents"]["steps"] == len(SEND_FLOW) + 1

        async with httpx2.AsyncClient() as raw:
            url = f"http://127.0.0.1:{port_b}/mcp"
            foreign = await raw.post(
                url, headers={**MCP_HEADERS, "Origin": "https://evil.example"}, content=INIT
            )
            assert foreign.status_code == 403
    finally:
        for proc in (proc_a, proc_b):
            if proc is not None and proc.poll() is None:
                stop(proc)


async def test_agents_on_one_http_server_each_record_into_their_own_session(
    root: Path, index: Path, log: Path
) -> None:
    """Over HTTP several agents share one server process; the session each one started is
    its own "current" session: steps recorded without a sessionId, `last` and searches scoped
    to the current session never mix the two agents' runs. (Clients with an MCP session: the
    stateless 2026 protocol has none, and its clients pass `sessionId` themselves.)"""
    proc, port = start_http(root, index, log)
    try:
        legacy = partial(http_client, port, mode="legacy")
        async with legacy() as a, legacy() as b:
            first = await ok(a, "mm_knowledge_start_session", {"flowTags": ["send"]})
            second = await ok(b, "mm_knowledge_start_session", {"flowTags": ["swap"]})
            by_a = await ok(a, "mm_knowledge_record_step", SEND_FLOW[0])
            by_b = await ok(b, "mm_knowledge_record_step", SEND_FLOW[1])
            assert by_a["sessionId"] == first["sessionId"]
            assert by_b["sessionId"] == second["sessionId"]

            async def both_indexed() -> dict[str, Any] | None:
                status = await ok(a, "mm_knowledge_status", {})
                return status if status["documents"]["steps"] == 2 else None

            await eventually(both_indexed)
            for client, own in ((a, by_a), (b, by_b)):
                steps = (await ok(client, "mm_knowledge_last", {"n": 10}))["steps"]
                assert [s["stepId"] for s in steps] == [own["stepId"]]
                page = await ok(
                    client, "mm_knowledge_search", {"query": "send", "scope": "current"}
                )
                assert {r["stepId"] for r in page["results"]} <= {own["stepId"]}
            async with legacy() as late:
                refused = await call(late, "mm_knowledge_record_step", SEND_FLOW[2])
                assert refused["error"]["code"] == "MM_NO_ACTIVE_SESSION"
    finally:
        stop(proc)


def test_exposed_address_without_token_refuses_to_start(root: Path, index: Path) -> None:
    args = serve_args(root, index, "--transport", "http", "--host", "0.0.0.0", "--port", "0")
    done = subprocess.run([*knowhow_command(), *args], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2
    assert "KNOWHOW_TOKEN" in done.stderr
    assert not index.exists()


async def test_exposed_address_requires_the_bearer_token(
    root: Path, index: Path, log: Path
) -> None:
    proc, port = start_http(root, index, log, "--host", "0.0.0.0", "--token", "s3cret")
    try:
        url = f"http://127.0.0.1:{port}/mcp"
        async with httpx2.AsyncClient() as raw:
            assert (await raw.post(url, headers=MCP_HEADERS, content=INIT)).status_code == 401
            wrong = {**MCP_HEADERS, "Authorization": "Bearer nope"}
            assert (await raw.post(url, headers=wrong, content=INIT)).status_code == 401
        async with http_client(port, {"Authorization": "Bearer s3cret"}) as client:
            status = await ok(client, "mm_knowledge_status", {})
            assert status["isWriter"] is True
    finally:
        stop(proc)
