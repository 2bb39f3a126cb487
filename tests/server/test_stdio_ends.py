"""How a stdio server ends: every request it read is answered before the end of stdin stops it,
Ctrl-C stops it while stdin is still open, and the temp files of writes a killed server left
half-done are swept when the next one starts. Real `knowhow serve` processes."""

import json
import os
import signal
import subprocess
import time
from collections.abc import Mapping

from engine import KnowledgeStore
from explorer import knowhow_command
from tests.conftest import Knowledge
from tests.server.mcp_helpers import REPO

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "pipe", "version": "1"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}
SEARCH = {
    "jsonrpc": "2.0",
    "id": 2,
    "method": "tools/call",
    "params": {"name": "mm_knowledge_search", "arguments": {"query": "send", "limit": 1}},
}


def serve(kb: Knowledge) -> subprocess.Popen[bytes]:
    command = [*knowhow_command(), "serve", "--root", str(kb.root), "--index", str(kb.index_dir)]
    return subprocess.Popen(
        command, cwd=REPO, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )


def lines(*messages: Mapping[str, object]) -> bytes:
    return b"".join(json.dumps(message).encode() + b"\n" for message in messages)


def test_requests_piped_at_once_are_all_answered_before_the_end_of_stdin(
    kb: Knowledge,
) -> None:
    kb.session("mm-piped-1")
    kb.step("mm-piped-1", test_id="send-button", screen="home")
    server = serve(kb)
    out, errors = server.communicate(lines(INITIALIZE, INITIALIZED, SEARCH), timeout=120)
    answers = [json.loads(line) for line in out.splitlines()]
    assert [answer["id"] for answer in answers] == [1, 2], errors.decode()[-2000:]
    assert answers[1]["result"]["structuredContent"]["ok"] is True


def test_ctrl_c_stops_a_stdio_server_whose_stdin_is_open(kb: Knowledge) -> None:
    kb.session("mm-ctrl-c-1")
    with serve(kb) as server:
        assert server.stdin is not None and server.stdout is not None
        server.stdin.write(lines(INITIALIZE))
        server.stdin.flush()
        assert json.loads(server.stdout.readline())["id"] == 1  # serving, stdin still open
        server.send_signal(signal.SIGINT)
        deadline = time.monotonic() + 60
        while server.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        stopped = server.poll() is not None
        server.kill()
    assert stopped, "still running after Ctrl-C"


def test_a_starting_server_sweeps_the_temp_files_of_writes_left_half_done(
    kb: Knowledge,
) -> None:
    kb.session("mm-killed-1")
    kb.step("mm-killed-1", test_id="send-button", screen="home")
    steps = kb.root / "mm-killed-1" / "steps"
    stale = steps / ".0002-mm_click.json.0123456789ab.tmp"
    stale_meta = kb.root / "mm-killed-1" / ".session.json.ba9876543210.tmp"
    fresh = steps / ".0003-mm_click.json.fedcba987654.tmp"
    lookalike = steps / ".notes.tmp"  # not a name our writes give: never touched
    for path in (stale, stale_meta, fresh, lookalike):
        path.write_bytes(b'{"half": ')
    an_hour_ago = time.time() - 3600
    for path in (stale, stale_meta, lookalike):
        os.utime(path, (an_hour_ago, an_hour_ago))
    before = sorted(p.name for p in steps.iterdir() if not p.name.startswith("."))
    server = serve(kb)
    try:
        server.communicate(lines(INITIALIZE), timeout=120)
    finally:
        server.kill()
    assert not stale.exists() and not stale_meta.exists()
    assert fresh.exists() and lookalike.exists()  # a write may be in progress; not ours
    assert sorted(p.name for p in steps.iterdir() if not p.name.startswith(".")) == before
    assert KnowledgeStore(kb.root).sweep_unfinished_writes() == 0
