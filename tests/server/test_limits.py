"""Attacks on the recording tools: oversized or unwritable records.

Over a limit (engine/records/limits.py) or beyond 64 bits is `MM_INVALID_INPUT` naming the field; a
refused write is `MM_WRITE_FAILED`; in every case nothing is written, not even a session folder.
A full disk is faked in this process (fsync raising ENOSPC: a real full disk is not portable);
a refused write in a real server process uses a file where the steps folder should be, since
a read-only folder does not stop root, which CI runs as.
"""

import errno
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from typer.testing import CliRunner

from engine.records import MAX_DEPTH, MAX_LIST_ITEMS, MAX_RECORD_BYTES, MAX_TEXT_CHARS
from server.app import create_server
from server.cli import app
from server.settings import ServerSettings
from tests.server.mcp_helpers import call, disk_snapshot, ok, stdio_agent

pytestmark = pytest.mark.anyio

STEP: dict[str, Any] = {"tool": {"name": "mm_click"}, "outcome": {"ok": True}}


def nested(depth: int) -> Any:
    value: Any = "deep"
    for _ in range(depth):
        value = [value]
    return value


def failed_with(message: str) -> dict[str, Any]:
    return {"tool": {"name": "mm_click"}, "outcome": {"ok": False, "error": {"message": message}}}


OVER_LIMITS = [
    ("a long message", failed_with("x" * (MAX_TEXT_CHARS + 1)), "outcome.error.message"),
    ("a big integer", {**STEP, "timing": {"durationMs": 2**64}}, "timing.durationMs"),
    ("a small integer", {**STEP, "timing": {"offset": -(2**63) - 1}}, "timing.offset"),
    (
        "a long list",
        {**STEP, "observation": {"testIds": [{"testId": "a"}] * (MAX_LIST_ITEMS + 1)}},
        "observation.testIds",
    ),
    ("deep nesting", {**STEP, "extra": nested(MAX_DEPTH + 1)}, "extra[0][0]"),
    (
        "a big record",
        {**STEP, "notes": ["n" * MAX_TEXT_CHARS] * (MAX_RECORD_BYTES // MAX_TEXT_CHARS + 1)},
        "record",
    ),
]


@pytest.fixture
async def client(root: Path, index: Path) -> AsyncIterator[Client]:
    async with Client(create_server(ServerSettings(root=root, index=index))) as connected:
        yield connected


@pytest.mark.parametrize(("case", "step", "field"), OVER_LIMITS, ids=[c[0] for c in OVER_LIMITS])
async def test_a_step_over_a_limit_is_refused_naming_the_field(
    client: Client, root: Path, index: Path, tmp_path: Path, case: str, step: Any, field: str
) -> None:
    await ok(client, "mm_knowledge_start_session", {"flowTags": ["send"]})
    before = disk_snapshot(tmp_path, ignore=index)
    envelope = await call(client, "mm_knowledge_record_step", step)
    assert envelope["error"]["code"] == "MM_INVALID_INPUT"
    assert envelope["error"]["message"].startswith(field), envelope
    assert disk_snapshot(tmp_path, ignore=index) == before


async def test_a_step_at_the_limits_is_recorded(client: Client) -> None:
    await ok(client, "mm_knowledge_start_session", {})
    step = failed_with("x" * MAX_TEXT_CHARS)
    step["timing"] = {"big": 2**63 - 1, "small": -(2**63)}
    recorded = await ok(client, "mm_knowledge_record_step", step)
    assert recorded["stepId"].endswith("0001-mm_click")


async def test_a_session_over_a_limit_leaves_no_folder(client: Client, root: Path) -> None:
    await ok(client, "mm_knowledge_start_session", {})  # the root exists
    before = sorted(root.iterdir())
    for args, field in [
        ({"build": {"version": 2**64}}, "build.version"),
        ({"launch": {"args": ["a" * (MAX_TEXT_CHARS + 1)]}}, "launch.args[0]"),
    ]:
        envelope = await call(client, "mm_knowledge_start_session", args)
        assert envelope["error"]["code"] == "MM_INVALID_INPUT"
        assert envelope["error"]["message"].startswith(f"{field}:")
    assert sorted(root.iterdir()) == before


async def test_a_full_disk_is_an_envelope_and_nothing_is_left(
    client: Client, root: Path, index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    session = await ok(client, "mm_knowledge_start_session", {})
    before = disk_snapshot(tmp_path, ignore=index)
    folders = sorted(root.iterdir())

    def no_space(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr("engine.core.files.os.fsync", no_space)
    for name, args in [("mm_knowledge_record_step", STEP), ("mm_knowledge_start_session", {})]:
        envelope = await call(client, name, args)
        assert envelope["error"]["code"] == "MM_WRITE_FAILED", (name, envelope)
        assert "ENOSPC" in envelope["error"]["message"]
    assert disk_snapshot(tmp_path, ignore=index) == before  # no step, no temp file
    assert sorted(root.iterdir()) == folders  # no empty session folder
    monkeypatch.undo()
    recorded = await ok(client, "mm_knowledge_record_step", STEP)  # space is back
    assert recorded["stepId"] == f"{session['sessionId']}/0001-mm_click"


async def test_a_refused_write_in_a_real_server_is_an_envelope(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        started = await ok(client, "mm_knowledge_start_session", {"flowTags": ["send"]})
        (root / started["sessionId"] / "steps").write_text("not a folder")
        envelope = await call(client, "mm_knowledge_record_step", STEP)
        assert envelope["error"]["code"] == "MM_WRITE_FAILED", envelope
        folders = sorted(root.iterdir())
        envelope = await call(client, "mm_knowledge_start_session", {"build": {"n": 2**70}})
        assert envelope["error"]["code"] == "MM_INVALID_INPUT", envelope
        assert envelope["error"]["message"].startswith("build.n:")
        assert sorted(root.iterdir()) == folders
        assert (await ok(client, "mm_knowledge_status", {}))["schemaVersion"]  # still serving


@pytest.mark.parametrize("command", ["index", "reindex"])
async def test_files_skipped_by_the_cli_reach_status(root: Path, index: Path, command: str) -> None:
    """Attack: a CLI-built index recorded no skipped files, and a FIFO step
    was skipped without a word. Both now reach `mm_knowledge_status` of a later server."""
    async with Client(create_server(ServerSettings(root=root, index=index))) as client:
        started = await ok(client, "mm_knowledge_start_session", {})
        await ok(client, "mm_knowledge_record_step", STEP)
    steps = root / started["sessionId"] / "steps"
    (steps / "0002-mm_click.json").write_text("{")
    os.mkfifo(steps / "0003-mm_click.json")
    cli = [command, "--json", "--root", str(root), "--index", str(index)]
    result = CliRunner().invoke(app, cli)
    assert result.exit_code == 0, result.output
    async with Client(create_server(ServerSettings(root=root, index=index))) as client:
        status = await ok(client, "mm_knowledge_status", {})
    reasons = {Path(s["path"]).name: s["reason"] for s in status["skipped"]}
    assert status["skippedCount"] == 2, status
    assert reasons["0002-mm_click.json"].startswith("invalid JSON")
    assert reasons["0003-mm_click.json"].startswith("not a regular file")
