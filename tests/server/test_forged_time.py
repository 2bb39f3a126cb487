"""A time a client sends is stored only when it is not from the future: a step dated 2099 is
stored at the time the server received it (a step of an older recording keeps its own)."""

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from mcp import Client

from engine import KnowledgeStore, parse_time
from server.app import create_server
from server.settings import ServerSettings
from tests.server.mcp_helpers import ok

pytestmark = pytest.mark.anyio


@pytest.fixture
async def client(root: Path, index: Path) -> AsyncIterator[Client]:
    async with Client(create_server(ServerSettings(root=root, index=index))) as connected:
        yield connected


@pytest.mark.parametrize(
    ("sent", "kept"),
    [
        ("2099-01-01T00:00:00.000Z", False),
        ("2026-01-15T12:00:00.000Z", True),
        ("now+2min", True),
    ],
    ids=["2099: receive time", "an old recording: its own", "2 minutes ahead: its own"],
)
async def test_a_time_from_the_future_is_replaced_by_the_receive_time(
    client: Client, root: Path, sent: str, kept: bool
) -> None:
    if sent == "now+2min":
        ahead = datetime.now(UTC) + timedelta(minutes=2)
        sent = ahead.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    await ok(client, "mm_knowledge_start_session", {"goal": "unlock"})
    before = datetime.now(UTC)
    step = {
        "timestamp": sent,
        "tool": {"name": "mm_click", "target": {"testId": "unlock-submit"}},
        "outcome": {"ok": True},
    }
    recorded = await ok(client, "mm_knowledge_record_step", step)
    after = datetime.now(UTC)
    session_id, stem = recorded["stepId"].split("/", 1)
    stored = KnowledgeStore(root).read_step(session_id, f"{stem}.json").timestamp
    if kept:
        assert stored == sent
    else:
        moment = parse_time(stored)
        assert moment is not None and before <= moment <= after
