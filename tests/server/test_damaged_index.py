"""A damaged index, met by a real `knowhow serve` process and a real MCP client over stdio.

Every answer is an envelope (results, or `MM_INDEX_UNAVAILABLE` while the index is damaged),
the process lives, `mm_knowledge_status` says what is going on, and the index heals: the writer
rebuilds it from the files and every recorded step is searchable again.
"""

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from engine.index import IndexLayout
from tests.engine.test_damaged_index import DAMAGES, scramble, segment_file
from tests.server.mcp_helpers import SEND_FLOW, call, eventually, ok, stdio_agent

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

QUERY = {"query": "send amount", "scope": "all", "limit": 50}


async def record_send_flow(client: Client) -> str:
    started = await ok(client, "mm_knowledge_start_session", {"goal": "Send", "flowTags": ["send"]})
    for step in SEND_FLOW:
        await ok(client, "mm_knowledge_record_step", step)
    return str(started["sessionId"])


async def every_step_found(client: Client, session_id: str) -> bool:
    """The search answers (an envelope, whatever happens) with every step of the session."""
    envelope = await call(client, "mm_knowledge_search", QUERY)
    if not envelope["ok"]:
        assert envelope["error"]["code"] == "MM_INDEX_UNAVAILABLE", envelope
        return False
    found = {r["stepId"] for r in envelope["result"]["results"]}
    wanted = {f"{session_id}/{n:04d}" for n in (2, 3, 4)}  # the click and the two typed fields
    return wanted <= {step_id.rsplit("-", 1)[0] for step_id in found}


async def healthy(client: Client) -> dict[str, Any] | None:
    status = await ok(client, "mm_knowledge_status", {})
    return status if status["health"] == "ok" and status["isWriter"] else None


async def test_an_index_damaged_at_rest_is_rebuilt_when_the_server_starts(
    root: Path, index: Path, log: Path
) -> None:
    """Random bytes in a segment's postings made the first search hang, then a Rust panic
    killed the server; now the start-up check finds the damage and rebuilds first."""
    async with stdio_agent(root, index, log) as a:
        session_id = await record_send_flow(a)
        await eventually(lambda: every_step_found(a, session_id))
    damaged = IndexLayout(index).current()
    assert damaged is not None
    scramble(segment_file(".idx")(damaged))
    async with stdio_agent(root, index, log) as b:
        status = await eventually(lambda: healthy(b))
        assert status["generation"] != damaged.name
        assert status["live"]["rebuilds"] == 1
        assert "checksum mismatch" in status["live"]["lastRebuildReason"]
        assert await every_step_found(b, session_id)


@pytest.mark.parametrize(
    "damage",
    [
        "bytes inverted in .idx",
        "bytes inverted in .store",
        ".pos deleted",
        "garbage manifest.sqlite3",
    ],
)
async def test_an_index_damaged_while_serving_answers_envelopes_and_heals(
    damage: str, root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        session_id = await record_send_flow(client)
        await eventually(lambda: every_step_found(client, session_id))
        damaged = IndexLayout(index).current()
        assert damaged is not None
        DAMAGES[damage](damaged)
        await ok(client, "mm_knowledge_record_step", SEND_FLOW[0])  # written while damaged

        async def rebuilt() -> bool:
            status = await ok(client, "mm_knowledge_status", {})
            assert status["health"] in ("ok", "rebuilding"), status
            return status["generation"] != damaged.name and await every_step_found(
                client, session_id
            )

        await eventually(rebuilt)
        status = await eventually(lambda: healthy(client))
        assert status["documents"]["steps"] == len(SEND_FLOW) + 1
        assert status["indexLag"]["pendingSessions"] == 0
