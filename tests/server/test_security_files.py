"""Attacks on the knowledge root through links and special files.

Real files, a real `knowhow index` process, a real `knowhow serve` over stdio with the SDK
client. Links never lead out of the root, for reading or for writing; a FIFO or `/dev/zero`
never blocks or fills memory; an oversized file is skipped. Every refused entry is reported.
"""

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from engine.records import MAX_READ_FILE_BYTES
from tests.server.mcp_helpers import (
    REPO,
    call,
    disk_snapshot,
    eventually,
    knowhow_command,
    ok,
    stdio_agent,
)

SECRET_WORD = "zanzibarquokka"
"""A word only files outside the root contain: it must never become searchable."""
CLI_TIMEOUT = 120.0
"""Generous: a FIFO that blocked the indexer would hang forever, not for two minutes."""

pytestmark = pytest.mark.anyio


def step_json(session_id: str, test_id: str) -> bytes:
    return orjson.dumps(
        {
            "timestamp": "2026-01-15T10:00:00.000Z",
            "sessionId": session_id,
            "tool": {"name": "mm_click", "target": {"testId": test_id}},
            "outcome": {"ok": True},
        }
    )


def session_json(session_id: str, goal: str) -> bytes:
    return orjson.dumps(
        {"sessionId": session_id, "createdAt": "2026-01-15T10:00:00.000Z", "goal": goal}
    )


def write_session(folder: Path, session_id: str, goal: str, test_id: str) -> None:
    (folder / "steps").mkdir(parents=True)
    (folder / "session.json").write_bytes(session_json(session_id, goal))
    (folder / "steps" / "0001-mm_click.json").write_bytes(step_json(session_id, test_id))


def knowhow(root: Path, index: Path, *args: str) -> dict[str, Any]:
    """A `knowhow` command as its own process; its JSON envelope."""
    done = subprocess.run(
        [*knowhow_command(), *args, "--root", str(root), "--index", str(index), "--json"],
        cwd=REPO,
        capture_output=True,
        timeout=CLI_TIMEOUT,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    return dict(json.loads(done.stdout)["result"])


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A folder beside the root with a session and a step that mention `SECRET_WORD`."""
    folder = tmp_path / "outside"
    write_session(folder / "mm-outside", "mm-outside", f"goal {SECRET_WORD}", SECRET_WORD)
    (folder / "loose.json").write_bytes(step_json("mm-good", f"{SECRET_WORD}-button"))
    return folder


@pytest.fixture
def attacked_root(root: Path, outside: Path) -> Path:
    """A root with one good session and every link and special-file attack beside it."""
    write_session(root / "mm-good", "mm-good", "Send ETH", "send-button")
    steps = root / "mm-good" / "steps"
    (steps / "0002-mm_click.json").symlink_to(outside / "loose.json")
    (steps / "0003-mm_click.json").symlink_to("/etc/passwd")
    os.mkfifo(steps / "0004-mm_click.json")
    with (steps / "0005-mm_click.json").open("wb") as big:  # sparse: cheap to make
        big.truncate(MAX_READ_FILE_BYTES + 1)
    (root / "mm-linked").symlink_to(outside / "mm-outside", target_is_directory=True)
    (root / "mm-linked-steps").mkdir()
    (root / "mm-linked-steps" / "session.json").write_bytes(session_json("mm-linked-steps", "x"))
    (root / "mm-linked-steps" / "steps").symlink_to(outside / "mm-outside" / "steps")
    (root / "mm-fifo").mkdir()
    os.mkfifo(root / "mm-fifo" / "session.json")
    (root / "mm-zero").mkdir()
    (root / "mm-zero" / "session.json").symlink_to("/dev/zero")
    return root


EXPECTED_SKIPS = {
    "mm-good/steps/0002-mm_click.json": "symbolic link",
    "mm-good/steps/0003-mm_click.json": "symbolic link",
    "mm-good/steps/0004-mm_click.json": "not a regular file",
    "mm-good/steps/0005-mm_click.json": "limit",
    "mm-linked": "symbolic link",
    "mm-linked-steps/steps": "symbolic link",
    "mm-fifo/session.json": "not a regular file",
    "mm-zero/session.json": "symbolic link",
}


def reasons_by_path(skipped: list[dict[str, str]], root: Path) -> dict[str, str]:
    return {
        Path(s["path"]).relative_to(root).as_posix()
        if Path(s["path"]).is_absolute()
        else s["path"]: s["reason"]
        for s in skipped
    }


def assert_expected_skips(reasons: dict[str, str]) -> None:
    assert set(reasons) == set(EXPECTED_SKIPS), reasons
    for path, words in EXPECTED_SKIPS.items():
        assert words in reasons[path], (path, reasons[path])


def test_index_skips_and_reports_links_and_special_files(
    attacked_root: Path, index: Path, outside: Path
) -> None:
    """Attack: step and session links out of the root, /etc/passwd as a step, a FIFO and
    /dev/zero as session.json, a step over the size limit. The index process finishes, reports
    each, indexes the good step, and nothing from outside is searchable."""
    before = disk_snapshot(outside)
    report = knowhow(attacked_root, index, "index")
    assert_expected_skips(reasons_by_path(report["skipped"], attacked_root))
    assert report["steps"] == 1
    assert knowhow(attacked_root, index, "search", "send button")["total"] == 1
    for query in (SECRET_WORD, "root:x:0:0", "goal"):
        assert knowhow(attacked_root, index, "search", query)["total"] == 0, query
    sessions = knowhow(attacked_root, index, "sessions")
    assert "mm-linked" not in {s["sessionId"] for s in sessions["sessions"]}
    rebuilt = knowhow(attacked_root, index, "reindex")
    assert_expected_skips(reasons_by_path(rebuilt["skipped"], attacked_root))
    assert disk_snapshot(outside) == before


@pytest.fixture
async def agent(root: Path, index: Path, log: Path) -> Any:
    async with stdio_agent(root, index, log) as client:
        yield client


async def test_recording_into_a_linked_session_is_refused(
    agent: Client, root: Path, index: Path, outside: Path, tmp_path: Path
) -> None:
    """Attack: a session folder, or its steps/ folder, that links out of the root; the agent
    records into it or starts it. Refused with MM_INVALID_INPUT, nothing written anywhere."""
    (root / "mm-linked").symlink_to(outside / "mm-outside", target_is_directory=True)
    (root / "mm-steps-linked").mkdir()
    (root / "mm-steps-linked" / "steps").symlink_to(outside / "mm-outside" / "steps")
    before = disk_snapshot(tmp_path, ignore=index)
    step = {"tool": {"name": "mm_click"}, "outcome": {"ok": True}}
    for session_id in ("mm-linked", "mm-steps-linked"):
        refused = await call(agent, "mm_knowledge_record_step", {**step, "sessionId": session_id})
        assert refused["error"]["code"] == "MM_INVALID_INPUT", refused
        assert "symbolic link" in refused["error"]["message"]
        started = await call(agent, "mm_knowledge_start_session", {"sessionId": session_id})
        assert started["error"]["code"] == "MM_INVALID_INPUT", started
    for step_id in ("mm-linked/0001-mm_click", "mm-steps-linked/0001-mm_click"):
        supersede = await call(agent, "mm_knowledge_supersede", {"stepId": step_id})
        assert not supersede["ok"], supersede
    assert disk_snapshot(tmp_path, ignore=index) == before


async def test_live_index_never_follows_a_link_written_while_serving(
    agent: Client, root: Path, outside: Path
) -> None:
    """Attack: while the server runs, a link to a step outside the root appears in the current
    session, and a linked session folder beside it. The live index reports both and never
    serves their text, in search, summarize or last."""
    started = await ok(agent, "mm_knowledge_start_session", {"goal": "Send ETH"})
    session_id = started["sessionId"]
    step = {"tool": {"name": "mm_click", "target": {"testId": "send-button"}}}
    await ok(agent, "mm_knowledge_record_step", {**step, "outcome": {"ok": True}})
    (root / session_id / "steps" / "0002-mm_click.json").symlink_to(outside / "loose.json")
    (root / "mm-linked").symlink_to(outside / "mm-outside", target_is_directory=True)

    async def reported() -> dict[str, Any] | None:
        status = await ok(agent, "mm_knowledge_status", {})
        return status if status["skippedCount"] == 2 else None

    status = await eventually(reported)
    reasons = {s["path"]: s["reason"] for s in status["skipped"]}
    assert set(reasons) == {f"{session_id}/steps/0002-mm_click.json", "mm-linked"}
    assert all("symbolic link" in r for r in reasons.values())
    assert (await ok(agent, "mm_knowledge_search", {"query": SECRET_WORD}))["total"] == 0
    recipe = await ok(agent, "mm_knowledge_summarize", {})
    assert SECRET_WORD not in json.dumps(recipe)
    linked = await call(agent, "mm_knowledge_summarize", {"sessionId": "mm-linked"})
    assert SECRET_WORD not in json.dumps(linked)
    last = await ok(agent, "mm_knowledge_last", {"scope": "all"})
    assert SECRET_WORD not in json.dumps(last)


def test_a_root_that_is_itself_a_link_is_read_and_written(tmp_path: Path, index: Path) -> None:
    """The root is the user's choice and may be a link (a shared folder mounted elsewhere):
    only links below it are refused."""
    real = tmp_path / "real-root"
    write_session(real / "mm-good", "mm-good", "Send ETH", "send-button")
    linked_root = tmp_path / "root-link"
    linked_root.symlink_to(real, target_is_directory=True)
    report = knowhow(linked_root, index, "index")
    assert (report["steps"], report["skipped"]) == (1, [])
    assert knowhow(linked_root, index, "search", "send button")["total"] == 1
