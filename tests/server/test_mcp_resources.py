"""Resources, completions, prompts and logging/setLevel through a real MCP client.

Sessions recorded with the tools are listed (paged) and read as resources, both as JSON equal
to what the tools answer and as readable text; arguments complete from the index's values,
the most frequent first; bad URIs and completion requests get a clear error or nothing, and
nothing outside the knowledge root is read. Over HTTP, clients of the 2025 protocol hear
`notifications/resources/list_changed` when a session is recorded, and every SSE stream opens
with a priming event carrying an id and a `retry` field.
"""

import json
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client, types
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from tests.server.mcp_helpers import (
    SEND_FLOW,
    SWAP_FLOW,
    eventually,
    http_client,
    ok,
    start_http,
    stdio_agent,
    stop,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
RESOURCE_NOT_FOUND = -32002


async def record(client: Client, flow: list[dict[str, Any]], **session: Any) -> str:
    started = await ok(client, "mm_knowledge_start_session", session)
    for step in flow:
        await ok(client, "mm_knowledge_record_step", step)
    return str(started["sessionId"])


async def indexed(client: Client, session_id: str, steps: int) -> None:
    async def held() -> bool:
        page = await ok(client, "mm_knowledge_sessions", {"limit": 50})
        counts = {s["sessionId"]: s["stepCount"] for s in page["sessions"]}
        return counts.get(session_id) == steps

    await eventually(held)


def contents(result: types.ReadResourceResult) -> tuple[Any, str]:
    """The JSON and the text of a read, checking both are there and name the URI read."""
    assert [c.mime_type for c in result.contents] == ["application/json", "text/markdown"]
    body, text = result.contents
    assert isinstance(body, types.TextResourceContents)
    assert isinstance(text, types.TextResourceContents)
    return json.loads(body.text), text.text


async def values(client: Client, ref: Any, name: str, value: str, **context: str) -> list[str]:
    result = await client.complete(ref, {"name": name, "value": value}, context or None)
    assert len(result.completion.values) <= 100
    return list(result.completion.values)


async def test_sessions_recipes_steps_and_status_read_as_json_and_text(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        send = await record(client, SEND_FLOW, goal="Send\nETH", flowTags=["send"])
        await indexed(client, send, len(SEND_FLOW))

        listed = await client.list_resources()
        uris = [r.uri for r in listed.resources]
        assert uris == ["knowhow://status", f"knowhow://sessions/{send}"]
        assert listed.next_cursor is None
        described = listed.resources[1].description or ""
        assert '"Send\\nETH"' in described  # recorded text quoted as data
        templates = await client.list_resource_templates()
        assert {t.uri_template for t in templates.resource_templates} == {
            "knowhow://sessions/{sessionId}",
            "knowhow://sessions/{sessionId}/recipe{?offset}",
            "knowhow://steps/{sessionId}/{step}",
        }

        session, text = contents(await client.read_resource(f"knowhow://sessions/{send}"))
        assert session["sessionId"] == send and session["stepCount"] == len(SEND_FLOW)
        assert session["recipe"] == f"knowhow://sessions/{send}/recipe"
        assert text.startswith(f"# Session {send}\n") and '"Send\\nETH"' in text

        recipe, text = contents(await client.read_resource(session["recipe"]))
        by_tool = await ok(client, "mm_knowledge_summarize", {"scope": {"sessionId": send}})
        assert recipe == by_tool
        assert recipe["screens"] == ["home", "send", "confirm-transaction", "home"]
        assert '"confirm-transaction"' in text and "failures:" in text

        step_id = recipe["failures"][0]["stepId"]
        step, text = contents(await client.read_resource(f"knowhow://steps/{step_id}"))
        assert step["step"]["stepId"] == step_id and step["context"]["stepId"] == step_id
        assert step_id in text

        status, text = contents(await client.read_resource("knowhow://status"))
        by_tool = await ok(client, "mm_knowledge_status", {})
        assert status["root"] == by_tool["root"] and status["documents"] == by_tool["documents"]
        assert text.startswith("# Knowledge index status\n")


async def test_resource_list_pages_with_a_cursor(root: Path, index: Path, log: Path) -> None:
    """More sessions than one page: every one listed once, newest first, page by page."""
    for n in range(105):
        session_id = f"paged-{n:04d}"
        steps = root / session_id / "steps"
        steps.mkdir(parents=True)
        record = {
            "schemaVersion": 1,
            "timestamp": f"2026-01-01T10:{n // 60:02d}:{n % 60:02d}Z",
            "sessionId": session_id,
            **SWAP_FLOW[1],
        }
        (steps / "0001-mm_click.json").write_text(json.dumps(record))
    async with stdio_agent(root, index, log) as client:

        async def all_indexed() -> bool:
            status = await ok(client, "mm_knowledge_status", {})
            return (status["documents"] or {}).get("sessions") == 105

        await eventually(all_indexed)
        first = await client.list_resources()
        assert len(first.resources) == 101 and first.next_cursor
        second = await client.list_resources(cursor=first.next_cursor)
        assert second.next_cursor is None
        sessions = [r.name for r in first.resources[1:] + second.resources]
        assert len(sessions) == 105 and set(sessions) == {f"paged-{n:04d}" for n in range(105)}
        with pytest.raises(MCPError) as bad:
            await client.list_resources(cursor="not-ours")
        assert bad.value.error.code == types.INVALID_PARAMS


async def test_bad_uris_are_clear_errors_and_read_nothing_outside_the_root(
    root: Path, index: Path, log: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other-root" / "mm-other-root-1" / "steps"
    other.mkdir(parents=True)
    (other / "0001-mm_click.json").write_text(json.dumps({"sessionId": "mm-other-root-1"}))
    async with stdio_agent(root, index, log) as client:
        send = await record(client, SEND_FLOW[:2], flowTags=["send"])
        await indexed(client, send, 2)
        invalid = [
            f"knowhow://sessions/{send}/../../etc/passwd",
            "knowhow://sessions/..%2F..%2Fetc%2Fpasswd/recipe",
            f"knowhow://sessions/{send}%2Frecipe",
            f"knowhow://steps/{send}/..",
            f"knowhow://sessions/{send}/recipe?offset=-1",
            f"knowhow://sessions/{send}/recipe?offset=1&x=2",
            f"knowhow://sessions/{send}/recipe?offset=999999999",
            "knowhow://sessions/" + "a" * 10_000,
            "knowhow://sessions/a b c d",
        ]
        for uri in invalid:
            with pytest.raises(MCPError) as bad:
                await client.read_resource(uri)
            assert bad.value.error.code == types.INVALID_PARAMS, uri
            assert "knowhow://sessions/{sessionId}" in bad.value.error.message
        missing = [
            "knowhow://sessions/mm-other-root-1",  # a session of another root
            "knowhow://sessions/mm-other-root-1/recipe",
            f"knowhow://steps/{send}/9999-mm_click",
            "knowhow://nothing-here",
            "file:///etc/passwd",
        ]
        for uri in missing:
            with pytest.raises(MCPError) as gone:
                await client.read_resource(uri)
            assert gone.value.error.code == RESOURCE_NOT_FOUND, uri


async def test_arguments_complete_from_the_index_most_frequent_first(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        send = await record(client, SEND_FLOW, flowTags=["send"], tags=["smoke"])
        swap = await record(client, SWAP_FLOW, flowTags=["swap"], tags=["smoke"])
        await indexed(client, swap, len(SWAP_FLOW))
        session = types.ResourceTemplateReference(uri="knowhow://sessions/{sessionId}")
        step = types.ResourceTemplateReference(uri="knowhow://steps/{sessionId}/{step}")
        screen = types.PromptReference(name="before_screen")
        flow = types.PromptReference(name="before_flow")

        assert await values(client, session, "sessionId", "") == [send, swap]  # 8 steps, 2
        assert await values(client, session, "sessionId", swap[:-1]) == [swap]
        # screens acted on: home on both flows, most often of all
        screens = await values(client, screen, "screen", "")
        assert screens[0] == "home" and {"send", "confirm-transaction", "swap"} <= set(screens)
        assert await values(client, screen, "screen", "CONF") == ["confirm-transaction"]
        assert await values(client, screen, "flowTag", "") == ["send", "swap"]
        assert await values(client, flow, "flowTag", "sw") == ["swap"]
        steps = await values(client, step, "step", "0001", sessionId=send)
        assert steps == ["0001-mm_describe_screen"]
        target = types.PromptReference(name="before_target")
        assert (await values(client, target, "testId", "Confirm"))[0] == "confirm-footer-button"
        tools = await values(client, screen, "tool", "")
        assert tools[:2] == ["click", "mm_click"]  # 5 clicks; a tool counts with its prefix too
        assert await values(client, flow, "tag", "sm") == ["smoke"]
        assert await values(client, flow, "gitBranch", "zzz-no-such-branch") == []

        nothing = [
            (session, "flowTag", ""),  # not an argument of that template
            (types.PromptReference(name="test_prompt_with_arguments"), "arg1", "te"),
            (types.ResourceTemplateReference(uri="test://template/{id}/data"), "id", ""),
            (screen, "screen", "x" * 10_000),
            (screen, "screen", "no-such-screen"),
            (step, "step", "0001"),  # no session chosen yet
        ]
        for ref, name, value in nothing:
            assert await values(client, ref, name, value) == [], (ref, name)
        assert await values(client, step, "step", "", sessionId="../../etc") == []


async def test_prompts_say_what_is_known_before_a_screen_or_flow(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        send = await record(client, SEND_FLOW, goal="Send ETH", flowTags=["send"])
        await indexed(client, send, len(SEND_FLOW))
        listed = await client.list_prompts()
        assert [p.name for p in listed.prompts] == ["before_screen", "before_flow", "before_target"]

        answer = await client.get_prompt("before_screen", {"screen": "confirm-transaction"})
        (message,) = answer.messages
        assert isinstance(message.content, types.TextContent)
        text = message.content.text
        assert "confirm-footer-button" in text and "mm_knowledge_search" in text

        answer = await client.get_prompt("before_flow", {"flowTag": "send"})
        assert isinstance(answer.messages[0].content, types.TextContent)
        assert f"knowhow://sessions/{send}/recipe" in answer.messages[0].content.text

        answer = await client.get_prompt("before_target", {"testId": "send-page-continue"})
        assert isinstance(answer.messages[0].content, types.TextContent)
        assert f"{send}/0005-mm_click" in answer.messages[0].content.text

        for name, args in [
            ("before_screen", {}),
            ("before_screen", {"screen": "home", "other": "x"}),
            ("before_flow", {"flowTag": "s" * 10_000}),
            ("no_such_prompt", {}),
        ]:
            with pytest.raises(MCPError) as bad:
                await client.get_prompt(name, args)
            assert bad.value.error.code == types.INVALID_PARAMS


async def test_a_session_read_while_it_is_written_answers_every_time(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        send = await record(client, SEND_FLOW[:1], flowTags=["send"])
        uri = f"knowhow://sessions/{send}/recipe"
        seen: list[int] = []

        async def reader() -> None:
            for _ in range(30):
                recipe, _ = contents(await client.read_resource(uri))
                seen.append(len(recipe["actions"]) + len(recipe["failures"]))

        async with anyio.create_task_group() as tasks:
            tasks.start_soon(reader)
            for step in SEND_FLOW[1:] * 3:
                await ok(client, "mm_knowledge_record_step", step)
        assert len(seen) == 30 and seen == sorted(seen)


async def test_http_clients_hear_new_sessions_and_steps_and_streams_are_primed(
    root: Path, index: Path, log: Path
) -> None:
    proc, port = start_http(root, index, log)
    heard: list[types.ResourceListChangedNotification] = []
    updated: list[str] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, types.ResourceListChangedNotification):
            heard.append(message)
        if isinstance(message, types.ResourceUpdatedNotification):
            updated.append(str(message.params.uri))

    try:
        transport = streamable_http_client(f"http://127.0.0.1:{port}/mcp")
        async with Client(transport, mode="legacy", message_handler=on_message) as listener:
            with pytest.warns(MCPDeprecationWarning):  # the client's word on the 2026 revision
                assert (await listener.set_logging_level("info")) == types.EmptyResult()
            capabilities = listener.session.server_capabilities
            assert capabilities is not None and capabilities.resources is not None
            assert capabilities.resources.list_changed is True
            assert capabilities.resources.subscribe is True
            await anyio.sleep(2)  # two polls of an index without sessions: nothing to tell
            assert heard == []
            async with http_client(port) as recorder:
                send = await record(recorder, SEND_FLOW[:1], flowTags=["send"])

                async def told() -> bool:
                    return bool(heard)

                await eventually(told)
                recipe = f"knowhow://sessions/{send}/recipe"
                with pytest.warns(MCPDeprecationWarning):  # 2025 protocol: subscribe
                    await listener.subscribe_resource(recipe)
                for uri, code in [
                    ("knowhow://status", types.INVALID_PARAMS),
                    ("test://watched-resource", RESOURCE_NOT_FOUND),
                ]:
                    with pytest.warns(MCPDeprecationWarning), pytest.raises(MCPError) as refused:
                        await listener.subscribe_resource(uri)
                    assert refused.value.error.code == code
                step = {"sessionId": send, **SEND_FLOW[1]}
                await ok(recorder, "mm_knowledge_record_step", step)

                async def recipe_updated() -> bool:
                    return recipe in updated

                await eventually(recipe_updated)
        await primed(port)
    finally:
        stop(proc)


async def primed(port: int) -> None:
    """A 2025-11-25 request's SSE stream opens with an event holding an id, a retry and no data."""
    url = f"http://127.0.0.1:{port}/mcp"
    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    async with httpx2.AsyncClient(timeout=30) as http:
        answer = await http.post(url, json=init, headers=headers)
        session = answer.headers["mcp-session-id"]
        headers |= {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
        await http.post(
            url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers
        )
        ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
        async with http.stream("POST", url, json=ping, headers=headers) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            raw = (await stream.aread()).decode()
    first = raw.replace("\r\n", "\n").split("\n\n")[0].split("\n")
    fields = dict(line.split(":", 1) for line in first if ":" in line)
    assert fields.get("id", "").strip() and fields.get("retry", "").strip() == "2000", raw
    assert fields.get("data", "").strip() == "", raw


async def test_clients_of_the_2026_protocol_hear_new_sessions_and_steps_when_they_listen(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        first = await record(client, SEND_FLOW[:1], flowTags=["send"])
        await indexed(client, first, 1)
        first_uri = f"knowhow://sessions/{first}"
        async with client.listen(
            resources_list_changed=True, resource_subscriptions=[first_uri]
        ) as subscription:
            assert subscription.honored.resources_list_changed
            await ok(client, "mm_knowledge_record_step", {"sessionId": first, **SEND_FLOW[1]})
            await record(client, SWAP_FLOW[:1], flowTags=["swap"])
            # an event may still be on its way for the first session: read until the first
            # session's update came and a list holds the second (generous: once indexed)
            events: list[str] = []
            with anyio.fail_after(90):
                async for event in subscription:
                    events.append(type(event).__name__)
                    if "ResourceUpdated" in events and (
                        len((await client.list_resources()).resources) == 3
                    ):
                        break
        assert set(events) <= {"ResourceUpdated", "ResourcesListChanged"}
