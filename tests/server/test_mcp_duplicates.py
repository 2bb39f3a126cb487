"""Spec 004's duplicates and clusters through an in-process MCP client on a real root and index,
and `relatedCount` on search results; bad input names the field and changes nothing."""

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

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


async def record_twice(client: Client) -> list[str]:
    """The send flow recorded by two sessions with the same goal; their ids once searchable."""
    sessions = []
    for _ in range(2):
        started = await ok(
            client, "mm_knowledge_start_session", {"goal": "Send ETH", "flowTags": ["send"]}
        )
        for step in SEND_FLOW:
            await ok(client, "mm_knowledge_record_step", step)
        sessions.append(str(started["sessionId"]))

    async def indexed() -> bool:
        last = await ok(client, "mm_knowledge_last", {"n": 50, "scope": "all"})
        return int(last["total"]) == 2 * len(SEND_FLOW)

    await eventually(indexed)
    return sessions


async def test_duplicates_clusters_and_related_counts(client: Client) -> None:
    sessions = await record_twice(client)
    found = await ok(client, "mm_knowledge_find_duplicates", {"types": ["step", "session"]})
    assert found["similarityThreshold"] == 0.95 and found["total"] >= 2
    for group in found["groups"]:
        assert group["count"] >= 2 and group["text"] and group["examples"]
        assert {e.split("/")[0] for e in group["examples"]} == set(sessions)
    assert ("session", 2) in {(g["type"], g["count"]) for g in found["groups"]}

    clusters = await ok(client, "mm_knowledge_cluster", {"type": "step", "nClusters": 2})
    assert len(clusters["clusters"]) == 2
    assert sum(c["size"] for c in clusters["clusters"]) == clusters["memories"]
    again = await ok(client, "mm_knowledge_cluster", {"type": "step", "nClusters": 2})
    assert again == clusters

    page = await ok(client, "mm_knowledge_search", {"query": "send-page-continue"})
    assert page["results"][0]["relatedCount"] == 1  # the same click of the other session
    assert all("relatedCount" in r for r in page["results"])

    workflows = await ok(
        client, "mm_knowledge_search", {"query": "send-page-continue", "types": ["session"]}
    )
    assert workflows["total"] == 2 and {r["sessionId"] for r in workflows["results"]} == set(
        sessions
    )
    for row in workflows["results"]:
        assert row["type"] == "session" and row["session"]["goal"] == "Send ETH"
        assert row["screens"] and row["actions"] and row["matchedSteps"]


@pytest.mark.parametrize(
    ("tool", "args", "field"),
    [
        ("mm_knowledge_find_duplicates", {"similarityThreshold": 1.2}, "similarityThreshold"),
        ("mm_knowledge_find_duplicates", {"similarityThreshold": "high"}, "similarityThreshold"),
        ("mm_knowledge_find_duplicates", {"types": ["workflow"]}, "types.0"),
        ("mm_knowledge_find_duplicates", {"filters": {"sinceHours": 0}}, "filters.sinceHours"),
        ("mm_knowledge_cluster", {"nClusters": 51}, "nClusters"),
        ("mm_knowledge_cluster", {"nClusters": "five"}, "nClusters"),
        ("mm_knowledge_cluster", {"type": "action"}, "type"),
        ("mm_knowledge_cluster", {"clusters": 3}, "clusters"),
    ],
)
async def test_bad_input_names_the_field_and_changes_nothing(
    client: Client, root: Path, tool: str, args: dict[str, Any], field: str
) -> None:
    await ok(client, "mm_knowledge_start_session", {"goal": "Send ETH"})
    before = disk_snapshot(root)
    envelope = await call(client, tool, args)
    assert envelope["error"]["code"] == "MM_INVALID_INPUT"
    assert envelope["error"]["message"].startswith(f"{field}:"), envelope
    assert disk_snapshot(root) == before
