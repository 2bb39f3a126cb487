"""Adversarial benchmark (issue 11): run each attack against a fresh root, real servers, real
MCP clients, and print whether it held, how long service took to recover and how many
recorded steps were lost.

    .venv/bin/python scripts/adversary.py [--only NAME ...] [--write]

Each attack gets its own fresh knowledge root and index under a temp folder, starts real
`knowhow serve` processes (stdio) and talks to them with the MCP SDK's client. "held" means:
every tool answer was an envelope, no server process died that the attack did not kill, and
every recorded step became searchable again; "recover" is seconds from the attack until every
recorded step was searchable (for a damaged index: until a rebuilt generation replaced it and
status said "ok"; — when nothing was broken to recover from); "lost" counts recorded steps
never found. `--write` puts the table between the `adversary` markers of
docs/benchmarks.md.

Adding an attack: write `async def attack_x(arena: Arena) -> Outcome` and append an `Attack`
to ATTACKS; `Arena` starts servers, records steps and checks what is searchable.
"""

import argparse
import contextlib
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from bench_common import err, knowhow_cmd, machine, machine_md, md_table, out, write_section
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from stress_mcp import pid_alive

REPO = Path(__file__).resolve().parents[1]
SETTLE_SECONDS = 60.0
POLL_SECONDS = 0.05
STALL_SECONDS = 5.0
"""KNOWHOW_WRITER_STALL_SECONDS for the servers of this run (default 60 s)."""


@dataclass
class Outcome:
    held: bool
    recover_seconds: float | None
    steps_lost: int
    note: str


@dataclass
class Server:
    client: Client
    pid: int


@dataclass
class Arena:
    """A fresh root and index, the servers started on it, and the steps recorded through them."""

    work: Path
    env: dict[str, str]
    recorded: dict[str, list[str]] = field(default_factory=dict)
    """Step ids recorded, by session."""
    non_envelopes: int = 0
    stack: AsyncExitStack = field(default_factory=AsyncExitStack)

    @property
    def root(self) -> Path:
        return self.work / "root"

    @property
    def index(self) -> Path:
        return self.work / "index"

    async def server(self) -> Server:
        """A `knowhow serve` process over stdio, stopped when the attack ends."""
        command, *args = knowhow_cmd()
        params = StdioServerParameters(
            command=command,
            args=[*args, "serve", "--root", str(self.root), "--index", str(self.index)],
            cwd=str(REPO),
            env=self.env,
        )
        log = (self.work / "server.log").open("a")
        self.stack.callback(log.close)
        client = await self.stack.enter_async_context(Client(stdio_client(params, errlog=log)))
        status = await self.call(client, "mm_knowledge_status", {})
        return Server(client, int(status["result"]["pid"]))

    async def call(self, client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        """A tool's envelope; anything else (the SDK's internal error) is counted."""
        result = await client.call_tool(tool, args)
        envelope = result.structured_content
        if not isinstance(envelope, dict) or "ok" not in envelope:
            self.non_envelopes += 1
            return {"ok": False, "error": {"code": "NOT_AN_ENVELOPE", "message": str(result)}}
        return envelope

    async def record(self, server: Server, session_id: str | None, n: int) -> str:
        """Start a session (when `session_id` is None) and record `n` clicks in it."""
        client = server.client
        if session_id is None:
            started = await self.call(
                client, "mm_knowledge_start_session", {"goal": "adversary", "flowTags": ["send"]}
            )
            session_id = str(started["result"]["sessionId"])
        for _ in range(n):
            step = {
                "sessionId": session_id,
                "tool": {"name": "mm_click", "target": {"testId": "coin-overview-send"}},
                "outcome": {"ok": True},
            }
            recorded = await self.call(client, "mm_knowledge_record_step", step)
            if recorded["ok"]:
                self.recorded.setdefault(session_id, []).append(recorded["result"]["stepId"])
        return session_id

    async def missing(self, client: Client) -> int:
        """Recorded steps the index does not answer with (all of them while it cannot)."""
        missing = 0
        for session_id, steps in self.recorded.items():
            envelope = await self.call(
                client, "mm_knowledge_last", {"n": 200, "scope": {"sessionId": session_id}}
            )
            found = {r["stepId"] for r in envelope["result"]["steps"]} if envelope["ok"] else set()
            missing += len(set(steps) - found)
        return missing

    async def settle(self, client: Client, since: float) -> tuple[float | None, int]:
        """Seconds from `since` until every recorded step is searchable, and how many never
        were within SETTLE_SECONDS."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while (missing := await self.missing(client)) and time.monotonic() < deadline:
            await anyio.sleep(POLL_SECONDS)
        return (None if missing else round(time.monotonic() - since, 2)), missing

    async def healed(self, client: Client, damaged: Path, since: float) -> float | None:
        """Seconds from `since` until a new generation replaced `damaged` and status says the
        index is healthy (None when not within SETTLE_SECONDS). Damage the open files keep
        answering around (a deleted file stays mapped) is found by the writer's check."""
        deadline = time.monotonic() + SETTLE_SECONDS
        while time.monotonic() < deadline:
            status = await self.call(client, "mm_knowledge_status", {})
            rebuilt = status["ok"] and status["result"]["generation"] != damaged.name
            if rebuilt and status["result"]["health"] == "ok":
                return round(time.monotonic() - since, 2)
            await anyio.sleep(POLL_SECONDS)
        return None

    def verdict(
        self,
        recover: float | None,
        lost: int,
        *checks: tuple[bool, str],
        note: str = "",
        needs_recovery: bool = True,
    ) -> Outcome:
        """Held when every check passed, every answer was an envelope and nothing was lost
        (and, for attacks that break service, when it came back: `recover` not None)."""
        failed = [what for ok, what in checks if not ok]
        if self.non_envelopes:
            failed.append(f"{self.non_envelopes} answers were not envelopes")
        if recover is None and needs_recovery:
            failed.append("never recovered")
        held = not failed and lost == 0
        return Outcome(held, recover, lost, "; ".join(failed) or note)


def scramble(path: Path) -> None:
    """Random bytes over the middle half of a file, in place."""
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 4)
        handle.write(os.urandom(size // 2))


def garbage_manifest(generation: Path) -> None:
    (generation / "manifest.sqlite3").write_bytes(b"\x8f" * 8192)


def generation(arena: Arena) -> Path:
    return arena.index / (arena.index / "CURRENT").read_text().strip()


# -- attacks ---------------------------------------------------------------------------------
async def non_utf8_name(arena: Arena) -> Outcome:
    """Item 5: a step file named with non-UTF-8 bytes in one session of a live batch."""
    server = await arena.server()
    one = await arena.record(server, None, 5)
    two = await arena.record(server, None, 5)
    await arena.settle(server.client, time.monotonic())
    attacked = time.monotonic()
    (arena.root / one / "steps" / os.fsdecode(b"0099-\xff\xfe.json")).write_bytes(b"{}")
    await arena.record(server, one, 5)
    await arena.record(server, two, 5)
    recover, lost = await arena.settle(server.client, attacked)
    status = (await arena.call(server.client, "mm_knowledge_status", {}))["result"]
    cli = subprocess.run(
        [*knowhow_cmd(), "reindex", "--root", str(arena.root), "--index", str(arena.index)],
        capture_output=True,
        env=arena.env,
        check=False,
    )
    generations = sorted(p.name for p in arena.index.glob("gen-*"))
    return arena.verdict(
        recover,
        lost,
        (status["skippedCount"] >= 1, "the bad name was not reported"),
        (cli.returncode == 0, f"knowhow reindex exited {cli.returncode}"),
        (len(generations) == 1, f"generations left: {generations}"),
        (pid_alive(server.pid), "the server died"),
    )


def damage_while_serving(damage: Callable[[Path], None]) -> Callable[[Arena], Awaitable[Outcome]]:
    """Item 3: damage the live generation under a running server, keep recording, and search."""

    async def attack(arena: Arena) -> Outcome:
        server = await arena.server()
        session_id = await arena.record(server, None, 10)
        await arena.settle(server.client, time.monotonic())
        damaged = generation(arena)
        attacked = time.monotonic()
        damage(damaged)
        await arena.record(server, session_id, 5)
        answers = []
        for query in ("send", "coin overview", "click"):
            answer = await arena.call(server.client, "mm_knowledge_search", {"query": query})
            answers.append(answer["ok"] or answer["error"]["code"] == "MM_INDEX_UNAVAILABLE")
        found, lost = await arena.settle(server.client, attacked)
        healed = await arena.healed(server.client, damaged, attacked)
        return arena.verdict(
            healed if found is not None else None,
            lost,
            (all(answers), "a search answered neither results nor MM_INDEX_UNAVAILABLE"),
            (healed is not None, "the damaged generation was never replaced"),
            (pid_alive(server.pid), "the server died"),
            note="" if found is None else f"every step searchable after {found:.2f} s",
        )

    return attack


async def idx_damaged_at_rest(arena: Arena) -> Outcome:
    """Item 3: random bytes in a segment's postings while no server runs; then one starts."""
    first = await arena.server()
    await arena.record(first, None, 10)
    await arena.settle(first.client, time.monotonic())
    await arena.stack.aclose()
    arena.stack = AsyncExitStack()
    damaged = generation(arena)
    scramble(next(damaged.glob("*.idx")))
    attacked = time.monotonic()
    server = await arena.server()
    recover, lost = await arena.settle(server.client, attacked)
    return arena.verdict(
        recover,
        lost,
        (generation(arena) != damaged, "the damaged generation is still live"),
        (pid_alive(server.pid), "the server died"),
    )


async def stopped_writer(arena: Arena) -> Outcome:
    """Item 6: the writer process is SIGSTOPped; another server's steps must still be indexed."""
    writer = await arena.server()
    standby = await arena.server()
    session_id = await arena.record(standby, None, 5)
    await arena.settle(standby.client, time.monotonic())
    attacked = time.monotonic()
    os.kill(writer.pid, signal.SIGSTOP)
    try:
        await arena.record(standby, session_id, 10)
        recover, lost = await arena.settle(standby.client, attacked)
        status = (await arena.call(standby.client, "mm_knowledge_status", {}))["result"]
    finally:
        os.kill(writer.pid, signal.SIGCONT)
    return arena.verdict(
        recover,
        lost,
        (status["isWriter"], "the standby did not take the lease"),
        (pid_alive(standby.pid), "the standby died"),
    )


async def index_disk_full(arena: Arena) -> Outcome:
    """Item 4: the index's disk fills up while steps are recorded, then space is freed."""
    arena.index.mkdir(parents=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(arena.index)],
        capture_output=True,
        check=False,
    )
    if mounted.returncode != 0:
        return Outcome(False, None, 0, "not run: mounting a small tmpfs needs root")
    filler = arena.index / "filler"
    try:
        server = await arena.server()
        session_id = await arena.record(server, None, 2)
        await arena.settle(server.client, time.monotonic())
        with filler.open("wb") as handle, contextlib.suppress(OSError):  # until ENOSPC
            while True:
                handle.write(b"\0" * 65536)
        attacked = time.monotonic()
        await arena.record(server, session_id, 38)
        await anyio.sleep(3)
        during = (await arena.call(server.client, "mm_knowledge_status", {}))["result"]
        missing_during = await arena.missing(server.client)
        filler.unlink()
        recover, lost = await arena.settle(server.client, attacked)
        return arena.verdict(
            recover,
            lost,
            (
                not missing_during or during["indexLag"]["pendingSessions"] > 0,
                "status said pendingSessions 0 while steps were missing",
            ),
            (pid_alive(server.pid), "the server died"),
        )
    finally:
        await arena.stack.aclose()
        subprocess.run(["umount", "-l", str(arena.index)], check=False)


async def fifo_session_json(arena: Arena) -> Outcome:
    """Item 6: a session.json that is a FIFO (reading it blocks forever); two servers, so a
    stalled writer can be replaced; steps of another session must still be indexed."""
    writer = await arena.server()
    standby = await arena.server()
    session_id = await arena.record(standby, None, 5)
    await arena.settle(standby.client, time.monotonic())
    trap = arena.root / "mm-fifo-trap"
    (trap / "steps").mkdir(parents=True)
    attacked = time.monotonic()
    os.mkfifo(trap / "session.json")
    await arena.record(standby, session_id, 10)
    recover, lost = await arena.settle(standby.client, attacked)
    status = (await arena.call(standby.client, "mm_knowledge_status", {}))["result"]
    return arena.verdict(
        recover,
        lost,
        (status["skippedCount"] >= 1, "the FIFO was not reported"),
        (pid_alive(writer.pid) and pid_alive(standby.pid), "a server died"),
    )


async def huge_record(arena: Arena) -> Outcome:
    """Items 7, 8: a 10 MB outcome.error.message and an integer beyond 64 bits in one call
    each; both must be refused (MM_INVALID_INPUT) with nothing written, and search stay fast."""
    server = await arena.server()
    session_id = await arena.record(server, None, 5)
    await arena.settle(server.client, time.monotonic())
    before = sorted(p.name for p in (arena.root / session_id / "steps").iterdir())
    big = {
        "tool": {"name": "mm_click", "target": {"testId": "coin-overview-send"}},
        "outcome": {"ok": False, "error": {"code": "X", "message": "send " * 2_000_000}},
    }
    wide = {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "extra": 2**70}
    started = time.monotonic()
    codes = []
    for args in (big, wide):
        answer = await arena.call(server.client, "mm_knowledge_record_step", args)
        codes.append(None if answer["ok"] else answer["error"]["code"])
    refused = round(time.monotonic() - started, 2)
    session = await arena.call(
        server.client, "mm_knowledge_start_session", {"goal": "wide", "extra": -(2**70)}
    )
    after = sorted(p.name for p in (arena.root / session_id / "steps").iterdir())
    folders = len([p for p in arena.root.iterdir() if p.is_dir()])
    return arena.verdict(
        None,
        0,
        (codes == ["MM_INVALID_INPUT"] * 2, f"record_step answered {codes}"),
        (not session["ok"] and folders == 1, "start_session wrote a session"),
        (before == after, "a step was written"),
        note=f"both refused in {refused} s",
        needs_recovery=False,
    )


async def big_step_file(arena: Arena) -> Outcome:
    """Item 7: a 50 MB step file written into a session by another program; a matching search
    and summarize must stay fast and small."""
    server = await arena.server()
    session_id = await arena.record(server, None, 5)
    await arena.settle(server.client, time.monotonic())
    message = ("confirm gas fee " * 3_300_000)[:50_000_000]
    step = {
        "timestamp": "2026-01-01T00:00:00.000Z",
        "sessionId": session_id,
        "tool": {"name": "mm_click", "target": {"testId": "giant-step"}},
        "outcome": {"ok": False, "error": {"code": "X", "message": message}},
    }
    steps = arena.root / session_id / "steps"
    (steps / "0100-mm_click.json").write_bytes(json.dumps(step).encode())
    attacked = time.monotonic()
    giant = f"{session_id}/0100-mm_click"
    arena.recorded[session_id].append(giant)
    recover, lost = await arena.settle(server.client, attacked)
    started = time.monotonic()
    found = await arena.call(server.client, "mm_knowledge_search", {"query": "confirm gas fee"})
    search_s = round(time.monotonic() - started, 2)
    started = time.monotonic()
    recipe = await arena.call(
        server.client, "mm_knowledge_summarize", {"scope": {"sessionId": session_id}}
    )
    summarize_s = round(time.monotonic() - started, 2)
    size = len(json.dumps(recipe))
    return arena.verdict(
        recover,
        lost,
        (found["ok"] and search_s < 2.0, f"search took {search_s} s"),
        (summarize_s < 2.0 and size < 1_000_000, f"summarize {summarize_s} s, {size} bytes"),
        note=f"search {search_s} s, summarize {summarize_s} s ({size:,} bytes)",
    )


MALFORMED_LINES = [
    '{"jsonrpc": "2.0", "id": 11, "method": "tools/ca',
    '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": '
    '"mm_knowledge_search", "arguments": {"query": "\\ud800"}}}',
    '{"jsonrpc": "2.0", "id": 13, "method": "tools/call", "params": {"name": "x", '
    '"arguments": {"a": ' + "[" * 500 + "]" * 500 + "}}}",
]


async def malformed_stdio(arena: Arena) -> Outcome:
    """Item 8: a truncated line, a lone surrogate and 500 nested arrays on stdin must each get
    a JSON-RPC error reply (or the client hangs), and the server must serve on."""
    return await anyio.to_thread.run_sync(malformed_stdio_sync, arena)


def malformed_stdio_sync(arena: Arena) -> Outcome:
    command = [*knowhow_cmd(), "serve", "--root", str(arena.root), "--index", str(arena.index)]
    with (arena.work / "server.log").open("a") as errlog:
        proc = subprocess.Popen(
            command,
            cwd=REPO,
            env=arena.env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
    assert proc.stdin is not None and proc.stdout is not None
    replies: list[bool] = []
    try:

        def send(line: str) -> None:
            assert proc.stdin is not None
            proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
            proc.stdin.flush()

        def receive() -> dict[str, Any] | None:
            assert proc.stdout is not None
            ready, _, _ = select.select([proc.stdout], [], [], 30.0)
            line = proc.stdout.readline() if ready else b""
            return json.loads(line) if line else None

        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "adversary", "version": "0"},
        }
        send(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}))
        receive()
        send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        for line in MALFORMED_LINES:
            send(line)
            reply = receive()
            replies.append(reply is not None and "error" in reply)
        call = {"name": "mm_knowledge_status", "arguments": {}}
        send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}))
        final = receive()
    finally:
        proc.terminate()
        proc.wait(10)
        proc.stdin.close()
        proc.stdout.close()
    return Outcome(
        all(replies) and final is not None and "result" in final,
        None,
        0,
        f"{sum(replies)}/{len(MALFORMED_LINES)} malformed lines answered with a JSON-RPC error"
        + ("" if final and "result" in final else "; the server stopped answering"),
    )


OUTSIDE_WORD = "exfiltrated"


def outside_step(session_id: str) -> bytes:
    step = {
        "timestamp": "2026-01-01T00:00:00.000Z",
        "sessionId": session_id,
        "tool": {"name": "mm_click", "target": {"testId": f"{OUTSIDE_WORD}-button"}},
        "outcome": {"ok": True},
    }
    return json.dumps(step).encode()


async def links_out_of_the_root(arena: Arena) -> Outcome:
    """Item 1: a step file and a session folder that are links to files outside the root, and
    /etc/passwd linked as a step, must not be read; record_step into a session whose folder is
    a link must not write outside the root."""
    outside = arena.work / "outside"
    (outside / "mm-outside1" / "steps").mkdir(parents=True)
    (outside / "step.json").write_bytes(outside_step("mm-linked1"))
    (outside / "mm-outside1" / "session.json").write_bytes(
        json.dumps({"sessionId": "mm-linked2", "createdAt": "2026-01-01T00:00:00.000Z"}).encode()
    )
    (outside / "mm-outside1" / "steps" / "0001-mm_click.json").write_bytes(
        outside_step("mm-linked2")
    )
    server = await arena.server()
    session_id = await arena.record(server, None, 3)
    await arena.settle(server.client, time.monotonic())
    steps = arena.root / session_id / "steps"
    (steps / "0050-mm_click.json").symlink_to(outside / "step.json")
    (steps / "0051-mm_click.json").symlink_to("/etc/passwd")
    (arena.root / "mm-linked2").symlink_to(outside / "mm-outside1", target_is_directory=True)
    (arena.root / "mm-linked3").symlink_to(outside / "mm-outside3", target_is_directory=True)
    (outside / "mm-outside3").mkdir()
    before = sorted(str(p) for p in outside.rglob("*"))
    attacked = time.monotonic()
    await arena.record(server, session_id, 2)
    recover, lost = await arena.settle(server.client, attacked)
    await anyio.sleep(2)  # give the writer time to index whatever it would index
    found = await arena.call(server.client, "mm_knowledge_search", {"query": OUTSIDE_WORD})
    leaked = found["ok"] and found["result"]["total"] > 0
    written = await arena.call(
        server.client,
        "mm_knowledge_record_step",
        {"sessionId": "mm-linked3", "tool": {"name": "mm_click"}, "outcome": {"ok": True}},
    )
    after = sorted(str(p) for p in outside.rglob("*"))
    return arena.verdict(
        recover,
        lost,
        (not leaked, "a file outside the root is searchable"),
        (before == after and not written["ok"], "record_step wrote outside the root"),
        (pid_alive(server.pid), "the server died"),
    )


SECRET = "Hunter2-Zebra-Quill"
PHRASE = "abandon ability able about above absent absorb abstract absurd abuse access accident"


def holds_secret(data: bytes) -> bool:
    """The password or the phrase, in clear (index `.store` blocks are lz4, whose literal runs
    keep short unique strings; the searches below check the index too)."""
    return SECRET.encode() in data or PHRASE[:15].encode() in data


async def secrets_in_clear(arena: Arena) -> Outcome:
    """Item 2: text typed into a password or recovery-phrase field, in each form the attack
    used, must be found in no file under the root or the index and by no search."""
    server = await arena.server()
    session_id = await arena.record(server, None, 1)
    typed = {"name": "mm_type", "input": {"text": SECRET}}
    forms: list[dict[str, Any]] = [
        {**typed, "target": {"a11yHint": {"role": "textbox", "name": "Password"}}},
        {**typed, "target": {"testId": "unlock-pwd"}},
        {"name": "mm_type", "target": {"testId": "srp-input"}, "input": {"text": PHRASE}},
        {"name": "mm_type", "target": {"testId": "login-form"}, "input": {"password": SECRET}},
        {
            "name": "mm_fill",
            "target": {"testId": "unlock-password"},
            "input": {"fill": {"text": SECRET}},
        },
        {
            **typed,
            "target": {"testId": "unlock-password"},
            "textRedacted": True,
            "args": {"text": SECRET},
        },
    ]
    for tool in forms:
        step = {"sessionId": session_id, "tool": tool, "outcome": {"ok": True}}
        await arena.call(server.client, "mm_knowledge_record_step", step)
    failed_copy = {
        "sessionId": session_id,
        "tool": {**typed, "target": {"testId": "unlock-password"}},
        "outcome": {"ok": False, "error": {"code": "X", "message": f"could not type {SECRET}"}},
    }
    await arena.call(server.client, "mm_knowledge_record_step", failed_copy)
    await anyio.sleep(3)  # indexed meanwhile
    in_files = [
        str(p.relative_to(arena.work))
        for p in (*arena.root.rglob("*"), *arena.index.rglob("*"))
        if p.is_file()
        and (SECRET.encode() in p.read_bytes() or b"abandon ability" in p.read_bytes())
    ]
    hits = 0
    for query in (SECRET, "abandon ability able"):
        found = await arena.call(server.client, "mm_knowledge_search", {"query": query})
        hits += found["result"]["total"] if found["ok"] else 0
    return arena.verdict(
        None,
        0,
        (not in_files, f"in clear in {len(in_files)} files, e.g. {in_files[:2]}"),
        (hits == 0, f"{hits} search results for the secrets"),
        needs_recovery=False,
    )


@dataclass(frozen=True)
class Attack:
    name: str
    item: str
    run: Callable[[Arena], Awaitable[Outcome]]


ATTACKS: list[Attack] = [
    Attack(
        "links out of the root (step, session folder, /etc/passwd, write)",
        "1",
        links_out_of_the_root,
    ),
    Attack("secrets typed into password / recovery-phrase fields (6 forms)", "2", secrets_in_clear),
    Attack("step file name not UTF-8 (live batch, reindex)", "5", non_utf8_name),
    Attack("index disk full during 38 record_step, then freed", "4", index_disk_full),
    Attack("random bytes in .idx, server started after", "3", idx_damaged_at_rest),
    Attack(
        "random bytes in .idx while serving",
        "3",
        damage_while_serving(lambda g: scramble(next(g.glob("*.idx")))),
    ),
    Attack(
        "random bytes in .store while serving",
        "3",
        damage_while_serving(lambda g: scramble(next(g.glob("*.store")))),
    ),
    Attack(
        ".pos deleted while serving",
        "3",
        damage_while_serving(lambda g: next(g.glob("*.pos")).unlink()),
    ),
    Attack(
        "garbage manifest.sqlite3 while serving",
        "3",
        damage_while_serving(garbage_manifest),
    ),
    Attack(f"writer SIGSTOPped (stall {STALL_SECONDS:g} s)", "6", stopped_writer),
    Attack("session.json is a FIFO (two servers)", "6", fifo_session_json),
    Attack(
        "10 MB error message; int beyond 64 bits (record_step, start_session)", "7, 8", huge_record
    ),
    Attack("50 MB step file written by another program", "7", big_step_file),
    Attack("malformed stdio: truncated, lone surrogate, 500 nested", "8", malformed_stdio),
]


async def run_attack(attack: Attack, base: Path) -> Outcome:
    work = Path(tempfile.mkdtemp(prefix="attack-", dir=base))
    env = {**os.environ, "KNOWHOW_WRITER_STALL_SECONDS": str(STALL_SECONDS)}
    arena = Arena(work, env)
    try:
        with anyio.fail_after(180):
            try:
                return await attack.run(arena)
            finally:
                await arena.stack.aclose()  # in the scope the servers were started in
    except Exception as exc:  # an attack that breaks the harness did not hold
        return Outcome(False, None, sum(map(len, arena.recorded.values())), f"error: {exc!r}")


def table(results: list[tuple[Attack, Outcome]]) -> str:
    rows = [
        [
            a.name,
            a.item,
            "yes" if o.held else "**no**",
            "—" if o.recover_seconds is None else f"{o.recover_seconds:.2f}",
            str(o.steps_lost),
            o.note,
        ]
        for a, o in results
    ]
    return md_table(["attack", "item", "held", "recover (s)", "steps lost", "note"], rows)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", help="run attacks whose name contains one of these")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    options = parser.parse_args()
    chosen = [
        a for a in ATTACKS if not options.only or any(word in a.name for word in options.only)
    ]
    base = Path(tempfile.mkdtemp(prefix="knowhow-adversary-"))
    results = []
    try:
        for attack in chosen:
            err(f"attack: {attack.name}")
            outcome = anyio.run(run_attack, attack, base)
            err(
                f"  held={outcome.held} recover={outcome.recover_seconds} lost={outcome.steps_lost}"
            )
            results.append((attack, outcome))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    report = table(results)
    out(report)
    if options.write:
        command = "`.venv/bin/python scripts/adversary.py --write`"
        body = (
            "## Adversarial run (`scripts/adversary.py`)\n\n"
            f"{machine_md(machine())}\n"
            f"Command: {command}. Each attack on a fresh root with real `knowhow serve` "
            "processes (stdio) and MCP clients; recover = seconds from the attack until every "
            "recorded step is searchable again; servers run with "
            f"`KNOWHOW_WRITER_STALL_SECONDS={STALL_SECONDS:g}`.\n\n{report}"
        )
        write_section("adversary", body)
    return 0 if all(o.held for _, o in results) else 1


if __name__ == "__main__":
    sys.exit(main())
