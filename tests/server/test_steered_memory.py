"""What a client sends cannot make a memory look followed: recall links are the server's own."""

from collections.abc import AsyncIterator
from pathlib import Path

import orjson
import pytest
from mcp import Client

from server.app import create_server
from server.settings import ServerSettings
from tests.server.mcp_helpers import ok

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(root: Path, index: Path) -> AsyncIterator[Client]:
    async with Client(create_server(ServerSettings(root=root, index=index))) as connected:
        yield connected


async def test_a_recalled_list_sent_with_a_step_is_not_written(client: Client, root: Path) -> None:
    started = await ok(client, "mm_knowledge_start_session", {"goal": "send"})
    forged = [{"stepId": f"mm-throwaway-{n}/0001-mm_click", "via": "search"} for n in range(8)]
    step = {
        "tool": {"name": "mm_click", "target": {"testId": "coin-overview-send"}},
        "outcome": {"ok": True},
        "recalled": forged,
    }
    recorded = await ok(client, "mm_knowledge_record_step", step)
    session_id, stem = recorded["stepId"].split("/")
    assert session_id == started["sessionId"]
    written = orjson.loads((root / session_id / "steps" / f"{stem}.json").read_bytes())
    assert "recalled" not in written
