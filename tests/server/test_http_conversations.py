"""Agents sharing one HTTP server each keep the session they started, however many other
clients come and go, and no request reaches another client's conversation by a header.

A step must never land in a session its caller did not start or name: not in the server's
default session (KNOWHOW_SESSION) because other clients pushed the agent's conversation out,
and not in an agent's session because a request of the stateless protocol carried that
agent's `mcp-session-id`.
"""

from pathlib import Path
from typing import Any

import httpx2
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from server.conversations import Conversations
from tests.server.mcp_helpers import SEND_FLOW, call, http_client, ok, start_http, stop

pytestmark = pytest.mark.anyio

OTHER_CLIENTS = 300
DEFAULT_SESSION = "mm-shared-default"
LEGACY_VERSION = "2025-06-18"
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def brief_client(http: httpx2.AsyncClient, url: str) -> None:
    """A client of the session-ful protocol that connects, asks for status once and leaves
    (plain HTTP: the SDK's client costs several times more per connection)."""
    hello = {"protocolVersion": LEGACY_VERSION, "capabilities": {}}
    hello["clientInfo"] = {"name": "brief", "version": "0"}
    opened = await http.post(
        url,
        headers=JSON_HEADERS,
        json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello},
    )
    headers = {**JSON_HEADERS, "mcp-session-id": opened.headers["mcp-session-id"]}
    headers["mcp-protocol-version"] = LEGACY_VERSION
    await http.post(
        url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
    )
    status = {"name": "mm_knowledge_status", "arguments": {}}
    answer = await http.post(
        url,
        headers=headers,
        json={"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": status},
    )
    assert '"ok":true' in answer.text.replace(" ", ""), answer.text[:300]
    await http.delete(url, headers=headers)


async def recorded_into(client: Client, step: dict[str, Any]) -> str:
    """The session a step recorded without `sessionId` went to."""
    return str((await ok(client, "mm_knowledge_record_step", step))["sessionId"])


@pytest.mark.slow
async def test_an_agent_keeps_its_session_while_hundreds_of_other_clients_come_and_go(
    root: Path, index: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWHOW_SESSION", DEFAULT_SESSION)
    proc, port = start_http(root, index, log)
    try:
        async with http_client(port, mode="legacy") as agent:
            await ok(agent, "mm_knowledge_start_session", {"sessionId": DEFAULT_SESSION})
            own = (await ok(agent, "mm_knowledge_start_session", {"flowTags": ["send"]}))[
                "sessionId"
            ]
            assert await recorded_into(agent, SEND_FLOW[0]) == own
            async with httpx2.AsyncClient(timeout=60) as http:
                for _ in range(OTHER_CLIENTS):
                    await brief_client(http, f"http://127.0.0.1:{port}/mcp")
            assert await recorded_into(agent, SEND_FLOW[1]) == own
            status = await ok(agent, "mm_knowledge_status", {})
            assert status["currentSession"] == own
        async with http_client(port, mode="legacy") as newcomer:  # never started one
            assert await recorded_into(newcomer, SEND_FLOW[2]) == DEFAULT_SESSION
    finally:
        stop(proc)


@pytest.mark.slow
async def test_a_stateless_request_never_gets_another_clients_conversation(
    root: Path, index: Path, log: Path
) -> None:
    """A request of the 2026 protocol has no MCP session: an `mcp-session-id` header it
    carries (here, agent A's) must not make it A's conversation."""
    proc, port = start_http(root, index, log)
    seen: list[str] = []

    async def remember_session_id(response: httpx2.Response) -> None:
        if "mcp-session-id" in response.headers:
            seen.append(response.headers["mcp-session-id"])

    try:
        hooks = {"response": [remember_session_id]}
        async with (
            httpx2.AsyncClient(event_hooks=hooks, timeout=60) as http,
            Client(
                streamable_http_client(f"http://127.0.0.1:{port}/mcp", http_client=http),
                mode="legacy",
            ) as agent,
        ):
            own = (await ok(agent, "mm_knowledge_start_session", {"flowTags": ["send"]}))[
                "sessionId"
            ]
            assert seen, "a legacy client has an MCP session id"
            async with http_client(port, {"mcp-session-id": seen[-1]}) as intruder:
                refused = await call(intruder, "mm_knowledge_record_step", SEND_FLOW[0])
                assert not refused["ok"], f"recorded into {refused['result']['sessionId']}"
                assert refused["error"]["code"] == "MM_NO_ACTIVE_SESSION"
                status = await ok(intruder, "mm_knowledge_status", {})
                assert status.get("currentSession") is None
            assert not (root / own / "steps").exists() or not any((root / own / "steps").iterdir())
    finally:
        stop(proc)


@pytest.mark.slow
async def test_an_agent_forgotten_after_too_many_other_clients_is_told_to_name_its_session(
    root: Path, index: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With room for 5 clients, 6 others push agent A out: A's next step without `sessionId`
    is refused, saying to pass one, and lands in no session; named, it is recorded."""
    monkeypatch.setenv("KNOWHOW_SESSION", DEFAULT_SESSION)
    monkeypatch.setenv("KNOWHOW_HTTP_MAX_SESSIONS", "5")
    proc, port = start_http(root, index, log)
    try:
        async with http_client(port, mode="legacy") as agent:
            await ok(agent, "mm_knowledge_start_session", {"sessionId": DEFAULT_SESSION})
            started = await ok(agent, "mm_knowledge_start_session", {"flowTags": ["send"]})
            async with httpx2.AsyncClient(timeout=60) as http:
                for _ in range(6):
                    await brief_client(http, f"http://127.0.0.1:{port}/mcp")
            refused = await call(agent, "mm_knowledge_record_step", SEND_FLOW[0])
            assert refused["error"]["code"] == "MM_NO_ACTIVE_SESSION"
            assert "pass sessionId" in refused["error"]["message"]
            named = {**SEND_FLOW[0], "sessionId": started["sessionId"]}
            assert await recorded_into(agent, named) == started["sessionId"]
        assert not (root / DEFAULT_SESSION / "steps").exists()
    finally:
        stop(proc)


def test_a_client_forgotten_after_starting_a_session_is_told_so_once() -> None:
    """Of the clients pushed out, only those that started a session are remembered as
    forgotten; a client never seen starts from the server's default session."""
    conversations = Conversations("mm-default", limit=2)
    conversations.of("a").current_session = "mm-own-a"
    conversations.of("b")  # never started one
    conversations.of("c")
    conversations.of("d")  # a and b pushed out
    again = conversations.of("a")
    assert (again.current_session, again.forgotten) == (None, True)
    assert conversations.of("b").current_session == "mm-default"
    assert not conversations.of("new").forgotten
