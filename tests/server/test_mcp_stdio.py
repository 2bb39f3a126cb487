"""IMPROVEMENT-01 §8 end to end over stdio, with real `knowhow serve` processes.

Agent A (one server process) records a send flow and a swap flow, then exits. Agent B (a new
server process, a new session) finds A's knowledge with the spec's calls, summarizes it, and
every tool is called with valid and invalid input; invalid input is `MM_INVALID_INPUT` naming
the field and changes nothing on disk.
"""

from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from tests.server.mcp_helpers import (
    SEND_FLOW,
    SWAP_FLOW,
    call,
    disk_snapshot,
    eventually,
    ok,
    stdio_agent,
)
from tests.server.spec_schemas import (
    BROWSER_TOOLS,
    CLUSTERING_TOOLS,
    LIFECYCLE_TOOLS,
    RECORDING_TOOLS,
    SPEC_TOOLS,
    check_knowledge_schema,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


async def record(client: Client, goal: str, flow_tag: str, steps: list[dict[str, Any]]) -> str:
    started = await ok(
        client,
        "mm_knowledge_start_session",
        {"goal": goal, "flowTags": [flow_tag], "tags": ["smoke"], "build": {"buildType": "test"}},
    )
    for step in steps:
        await ok(client, "mm_knowledge_record_step", step)
    return str(started["sessionId"])


async def agent_a(root: Path, index: Path, log: Path) -> tuple[str, str]:
    async with stdio_agent(root, index, log) as client:
        send = await record(client, "Send 0.01 ETH to another account", "send", SEND_FLOW)
        swap = await record(client, "Swap ETH for DAI", "swap", SWAP_FLOW)
        status = await ok(client, "mm_knowledge_status", {})
        assert status["isWriter"] is True
    return send, swap


def check_files_of_agent_a(root: Path, send: str) -> None:
    """§8: A's run produced `session.json` and step records; no directory-name tagging and no
    screenshots (they stay opt-in)."""
    meta = orjson.loads((root / send / "session.json").read_bytes())
    assert meta["flowTags"] == ["send"] and meta["tags"] == ["smoke"]
    assert meta["schemaVersion"] == 1 and meta["createdAt"] and meta["build"]
    assert meta["git"]["commit"], "git detected from the working directory"
    steps = sorted(p.name for p in (root / send / "steps").iterdir())
    assert len(steps) == len(SEND_FLOW) and steps[1] == "0002-mm_click.json"
    assert "send" not in send
    assert not [p for p in root.rglob("*") if p.suffix in (".png", ".jpg")]


async def test_agent_b_reuses_what_agent_a_recorded(root: Path, index: Path, log: Path) -> None:
    send, swap = await agent_a(root, index, log)
    check_files_of_agent_a(root, send)
    async with stdio_agent(root, index, log) as b:
        tools = {t.name: t for t in (await b.list_tools()).tools}
        assert (
            set(tools)
            == set(SPEC_TOOLS)
            | RECORDING_TOOLS
            | LIFECYCLE_TOOLS
            | CLUSTERING_TOOLS
            | BROWSER_TOOLS
        )
        for name in SPEC_TOOLS:
            check_knowledge_schema(name, tools[name].input_schema)

        spec_call = {"query": "send", "scope": "all", "filters": {"flowTag": "send"}}
        tagged = await ok(b, "mm_knowledge_search", spec_call)
        assert tagged["total"] >= 5
        assert {r["sessionId"] for r in tagged["results"]} == {send}
        top = tagged["results"][0]
        assert top["matchedFields"] and top["snippet"] and top["sessionGoal"]

        default = await ok(b, "mm_knowledge_search", {"query": "send"})
        assert send in {r["sessionId"] for r in default["results"]}
        assert swap in {r["sessionId"] for r in default["results"]}
        assert default["total"] > tagged["total"], "the flowTag filter drops the swap steps"

        listed = await ok(b, "mm_knowledge_sessions", {"filters": {"flowTag": "send"}})
        assert [s["sessionId"] for s in listed["sessions"]] == [send]
        assert listed["sessions"][0]["flowTags"] == ["send"]
        assert listed["sessions"][0]["git"]["commit"]

        recipe = await ok(b, "mm_knowledge_summarize", {"scope": {"sessionId": send}})
        assert recipe["screens"] == ["home", "send", "confirm-transaction", "home"]
        targets = [a["target"] for a in recipe["actions"]]
        for test_id in ("coin-overview-send", "recipient-address-input", "send-amount-input"):
            assert f"testId:{test_id}" in targets
        assert targets[-1] == "testId:confirm-footer-button"
        (failure,) = recipe["failures"]
        assert failure["errorCode"] == "MM_TARGET_NOT_FOUND" and failure["recoveredBy"]
        legacy = await ok(b, "mm_knowledge_summarize", {"sessionId": send})
        assert legacy == recipe

        last = await ok(b, "mm_knowledge_last", {"n": 2, "scope": {"sessionId": send}})
        assert [s["stepId"] for s in last["steps"]] == [
            f"{send}/0007-mm_wait_for",
            f"{send}/0008-mm_click",
        ]
        no_session = await call(b, "mm_knowledge_last", {})
        assert no_session["error"]["code"] == "MM_NO_ACTIVE_SESSION"

        await check_invalid_input(b, root)
        await check_b_records_and_finds_its_own_step(b)


INVALID: list[tuple[str, dict[str, Any], str]] = [
    ("mm_knowledge_search", {}, "query"),
    ("mm_knowledge_search", {"query": ""}, "query"),
    ("mm_knowledge_search", {"query": "x" * 201}, "query"),
    ("mm_knowledge_search", {"query": "send", "limit": 0}, "limit"),
    ("mm_knowledge_search", {"query": "send", "limit": 101}, "limit"),
    ("mm_knowledge_search", {"query": "send", "offset": -1}, "offset"),
    ("mm_knowledge_search", {"query": "send", "scope": "everything"}, "scope"),
    ("mm_knowledge_search", {"query": "send", "filters": {"sinceHours": 0}}, "filters.sinceHours"),
    ("mm_knowledge_search", {"query": "send", "filters": {"color": "red"}}, "filters.color"),
    ("mm_knowledge_search", {"query": "send", "page": 2}, "page"),
    ("mm_knowledge_last", {"n": 0}, "n"),
    ("mm_knowledge_last", {"n": 201}, "n"),
    ("mm_knowledge_last", {"scope": {"sessionId": "../../etc"}}, "sessionId"),
    ("mm_knowledge_summarize", {"scope": "all"}, "scope"),
    ("mm_knowledge_summarize", {"sessionId": "abc"}, "sessionId"),
    ("mm_knowledge_summarize", {"sessionId": "../outside"}, "sessionId"),
    ("mm_knowledge_sessions", {"limit": 51}, "limit"),
    ("mm_knowledge_sessions", {"filters": {"flowTag": ""}}, "filters.flowTag"),
    ("mm_knowledge_start_session", {"flowTags": "send"}, "flowTags"),
    ("mm_knowledge_start_session", {"goal": ""}, "goal"),
    ("mm_knowledge_start_session", {"sessionId": "../../escape"}, "sessionId"),
    ("mm_knowledge_start_session", {"color": "red"}, "color"),
    ("mm_knowledge_record_step", {}, "tool"),
    (
        "mm_knowledge_record_step",
        {"tool": {"name": "mm_click"}, "outcome": {"ok": "yes"}},
        "outcome.ok",
    ),
    (
        "mm_knowledge_record_step",
        {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "sessionId": "../x"},
        "sessionId",
    ),
    (
        "mm_knowledge_record_step",
        {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "timestamp": "yesterday"},
        "timestamp",
    ),
    ("mm_knowledge_status", {"verbose": True}, "verbose"),
]


async def check_invalid_input(client: Client, root: Path) -> None:
    before = disk_snapshot(root)
    for name, args, field in INVALID:
        envelope = await call(client, name, args)
        assert envelope["ok"] is False, (name, args)
        assert envelope["error"]["code"] == "MM_INVALID_INPUT", (name, args, envelope)
        named = envelope["error"]["message"].split(":", 1)[0]
        assert named.endswith(field), (name, args, envelope)
    assert disk_snapshot(root) == before


async def check_b_records_and_finds_its_own_step(client: Client) -> None:
    """B found no writer alive (A exited), so it indexes what it records itself."""
    status = await ok(client, "mm_knowledge_status", {})
    assert status["isWriter"] is True
    assert status["documents"]["steps"] == len(SEND_FLOW) + len(SWAP_FLOW)
    started = await ok(client, "mm_knowledge_start_session", {"flowTags": ["send"]})
    recorded = await ok(client, "mm_knowledge_record_step", SEND_FLOW[1])

    async def mine() -> bool:
        page = await ok(client, "mm_knowledge_search", {"query": "send", "scope": "current"})
        return [r["stepId"] for r in page["results"]] == [recorded["stepId"]]

    await eventually(mine)
    listed = await ok(client, "mm_knowledge_sessions", {"filters": {"flowTag": "send"}})
    assert listed["sessions"][0]["sessionId"] == started["sessionId"]
