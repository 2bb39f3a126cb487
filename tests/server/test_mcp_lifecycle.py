"""Spec 002's lifecycle tools through an in-process MCP client on a real root and index:
timeline, session context and supersede, with their bad input (nothing written)."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from server.app import create_server
from server.settings import ServerSettings
from tests.server.mcp_helpers import SEND_FLOW, call, disk_snapshot, eventually, ok

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(root: Path, index: Path) -> AsyncIterator[Client]:
    async with Client(create_server(ServerSettings(root=root, index=index))) as connected:
        yield connected


async def record_flow(client: Client, goal: str) -> tuple[str, list[str]]:
    """A recorded send flow in a new session; returns its id and step ids once searchable."""
    started = await ok(client, "mm_knowledge_start_session", {"goal": goal, "flowTags": ["send"]})
    steps = [(await ok(client, "mm_knowledge_record_step", s))["stepId"] for s in SEND_FLOW]

    async def indexed() -> bool:
        last = await ok(client, "mm_knowledge_last", {"n": 50, "scope": "all"})
        return {s["stepId"] for s in last["steps"]} >= set(steps)

    await eventually(indexed)
    return str(started["sessionId"]), steps


async def test_timeline_by_anchor_and_by_query(client: Client) -> None:
    session_id, steps = await record_flow(client, "Send ETH to a friend")
    line = await ok(client, "mm_knowledge_timeline", {"anchor": steps[2], "before": 1, "after": 2})
    assert line["anchor"]["stepId"] == steps[2]
    assert [s["stepId"] for s in line["before"]] == steps[1:2]
    assert [s["stepId"] for s in line["after"]] == steps[3:5]
    session = line["sessions"][session_id]
    assert session["goal"] == "Send ETH to a friend" and session["stepCount"] == len(steps)
    assert line["anchor"]["sourceSession"]["id"] == session_id

    page = await ok(client, "mm_knowledge_search", {"query": "confirm footer button", "limit": 1})
    by_query = await ok(client, "mm_knowledge_timeline", {"query": "confirm footer button"})
    assert by_query["anchor"]["stepId"] == page["results"][0]["stepId"]


@pytest.mark.parametrize(
    ("args", "code", "field"),
    [
        ({}, "MM_INVALID_INPUT", "anchor"),
        ({"anchor": "mm-none-such/0001-mm_click", "query": "send"}, "MM_INVALID_INPUT", "anchor"),
        ({"anchor": "mm-none-such/0001-mm_click"}, "MM_NOT_FOUND", "anchor"),
        ({"anchor": "../../etc/passwd"}, "MM_INVALID_INPUT", "anchor"),
        ({"query": "zebra giraffe"}, "MM_NOT_FOUND", "query"),
        ({"query": "send", "before": 51}, "MM_INVALID_INPUT", "before"),
        ({"query": "send", "after": -1}, "MM_INVALID_INPUT", "after"),
        ({"query": "send", "scope": "everything"}, "MM_INVALID_INPUT", "scope"),
    ],
)
async def test_timeline_bad_input_names_the_field(
    client: Client, args: dict[str, Any], code: str, field: str
) -> None:
    await record_flow(client, "Send")
    envelope = await call(client, "mm_knowledge_timeline", args)
    assert envelope["error"]["code"] == code
    assert envelope["error"]["message"].startswith(field), envelope


async def test_session_context_of_a_step(client: Client) -> None:
    session_id, steps = await record_flow(client, "Send ETH")
    context = await ok(client, "mm_knowledge_session_context", {"stepId": steps[1]})
    assert context["session"]["id"] == session_id and context["stepCount"] == len(steps)
    assert context["usageType"] == "created" and context["recalledBy"] == []
    missing = await call(client, "mm_knowledge_session_context", {"stepId": f"{session_id}/9999-x"})
    assert missing["error"]["code"] == "MM_NOT_FOUND"
    assert missing["error"]["message"].startswith("stepId")


async def test_supersede_hides_the_step_and_refuses_cycles(client: Client, root: Path) -> None:
    _, old = await record_flow(client, "Send, old UI")
    _, new = await record_flow(client, "Send, new UI")
    done = await ok(client, "mm_knowledge_supersede", {"stepId": old[1], "supersededBy": new[1]})
    assert done["isSuperseded"] and done["supersededBy"]["stepId"] == new[1]
    assert done["supersededBy"]["target"] == "testId:coin-overview-send"

    async def hidden() -> bool:
        page = await ok(client, "mm_knowledge_search", {"query": "coin overview send"})
        return old[1] not in {r["stepId"] for r in page["results"]}

    await eventually(hidden)
    shown = await ok(
        client, "mm_knowledge_search", {"query": "coin overview send", "includeSuperseded": True}
    )
    flagged = next(r for r in shown["results"] if r["stepId"] == old[1])
    assert flagged["isSuperseded"] and flagged["supersededBy"]["stepId"] == new[1]

    before = disk_snapshot(root)
    for args, code, field in [
        ({"stepId": new[1], "supersededBy": old[1]}, "MM_INVALID_INPUT", "supersededBy"),
        ({"stepId": new[1], "supersededBy": new[1]}, "MM_INVALID_INPUT", "supersededBy"),
        ({"stepId": new[1]}, "MM_INVALID_INPUT", "supersededBy"),
        ({"stepId": "mm-none-such/0001-mm_click", "reason": "gone"}, "MM_NOT_FOUND", "stepId"),
        ({"stepId": new[1], "supersededBy": "mm-none-such/0001-x"}, "MM_NOT_FOUND", "supersededBy"),
        ({"stepId": "../../etc/passwd", "reason": "x"}, "MM_INVALID_INPUT", "stepId"),
        ({"stepId": new[1], "reason": ""}, "MM_INVALID_INPUT", "reason"),
    ]:
        envelope = await call(client, "mm_knowledge_supersede", args)
        assert envelope["error"]["code"] == code, (args, envelope)
        assert envelope["error"]["message"].startswith(field), (args, envelope)
    assert disk_snapshot(root) == before  # nothing written

    reason = await ok(client, "mm_knowledge_supersede", {"stepId": new[2], "reason": "flaky"})
    assert reason["reason"] == "flaky" and "supersededBy" not in reason


def click(test_id: str, ok_: bool = True) -> dict[str, Any]:
    outcome: dict[str, Any] = {"ok": ok_}
    if not ok_:
        outcome["error"] = {"code": "MM_TARGET_NOT_FOUND", "message": f"{test_id} not found"}
    return {"tool": {"name": "mm_click", "target": {"testId": test_id}}, "outcome": outcome}


async def recalled_links(client: Client, root: Path, args: dict[str, Any]) -> list[Any]:
    step_id = (await ok(client, "mm_knowledge_record_step", args))["stepId"]
    session_id, stem = step_id.split("/")
    record = orjson.loads((root / session_id / "steps" / f"{stem}.json").read_bytes())
    return list(record.get("recalled", []))


async def test_following_a_search_result_that_works_records_a_recall(
    client: Client, root: Path
) -> None:
    _, memory = await record_flow(client, "Send, first run")
    later = await ok(client, "mm_knowledge_start_session", {"goal": "Send again"})
    before = disk_snapshot(root)
    page = await ok(client, "mm_knowledge_search", {"query": "coin overview send"})
    await ok(client, "mm_knowledge_search", {"query": "confirm footer button"})
    assert disk_snapshot(root) == before  # searching writes nothing
    assert memory[1] in {r["stepId"] for r in page["results"]}

    assert await recalled_links(client, root, click("confirm-footer-button", ok_=False)) == []
    assert await recalled_links(client, root, click("account-menu-icon")) == []  # not offered
    followed = await recalled_links(client, root, click("coin-overview-send"))
    assert followed == [{"stepId": memory[1], "via": "search"}]
    assert await recalled_links(client, root, click("coin-overview-send")) == []  # once a session

    async def recalled() -> dict[str, Any] | None:
        context = await ok(client, "mm_knowledge_session_context", {"stepId": memory[1]})
        return context if context["usageType"] == "recalled" else None

    context = await eventually(recalled)
    assert [r["sessionId"] for r in context["recalledBy"]] == [later["sessionId"]]
    again = await ok(client, "mm_knowledge_search", {"query": "coin overview send"})
    shown = next(r for r in again["results"] if r["stepId"] == memory[1])
    assert shown["recallCount"] == 1 and 0 < shown["salience"] < 1
    salient = await ok(
        client, "mm_knowledge_search", {"query": "coin overview send", "minSalience": 0.01}
    )
    assert [r["stepId"] for r in salient["results"]] == [memory[1]]
