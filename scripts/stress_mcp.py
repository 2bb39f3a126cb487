"""Stress the MCP server: N `knowhow serve` processes recording and searching one root at once.

Each agent is a real MCP client (stdio) driving its own server process: it starts a session and
loops until the deadline — record a step, then search, list, summarize or read the last steps;
every fourth step it polls the index until that step is in it, to measure freshness (record
returned, i.e. the file is written → the step is in the index every process searches), then
checks that a search finds it. Partway through, the process holding the
writer lease is SIGKILLed; its agent restarts a server and carries on, another process takes
the lease over. At the end the live index must hold every step file, and so must a fresh
server after its start-up reconciliation; no server may have died unless we killed it.

    .venv/bin/python scripts/stress_mcp.py --processes 8 --duration 60 --write

Prints a markdown summary; `--write` also puts it between the `bench-mcp` markers of
docs/benchmarks.md (other sections of that file are left alone).
"""

import argparse
import os
import signal
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

from engine.live import writer_pid

REPO = Path(__file__).resolve().parents[1]
BENCHMARKS = REPO / "docs" / "benchmarks.md"
START, END = "<!-- bench-mcp:start -->", "<!-- bench-mcp:end -->"
FLOWS = ("send", "swap", "connect", "sign", "onboarding", "settings", "tx-confirmation")
SCREENS = ("home", "send", "confirm-transaction", "swap", "settings")
QUERIES = ("send button", "confirm transaction", "swap tokens", "settings", "click continue")
FRESHNESS_EVERY = 4
POLL_SECONDS = 0.01
FRESHNESS_TIMEOUT = 10.0
SETTLE_TIMEOUT = 20.0
FAILOVER_MARGIN = 1.0
ENTRY = "from server.cli.entry import main; main()"


@dataclass
class Run:
    processes: int
    duration: float
    kill_at: float | None
    root: Path
    index: Path
    log: Path
    verbose: bool = False
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    freshness: list[tuple[float, float]] = field(default_factory=list)
    """(perf_counter when the step was written, ms until it was in search results)"""
    missed_freshness: int = 0
    unsearchable: int = 0
    without_vector: int = 0
    """Steps found by the keyword leg when first visible but not yet by meaning (no vector)."""
    recorded: int = 0
    killed: set[int] = field(default_factory=set)
    restarts: int = 0
    crashes: list[str] = field(default_factory=list)
    servers: dict[int, int] = field(default_factory=dict)
    takeover_seconds: float | None = None
    killed_at: float | None = None
    live_check: dict[str, Any] = field(default_factory=dict)
    final_check: dict[str, Any] = field(default_factory=dict)

    async def call(self, client: Client, tool: str, args: dict[str, Any]) -> dict[str, Any]:
        started = time.perf_counter()
        result = await client.call_tool(tool, args)
        self.latencies[tool].append((time.perf_counter() - started) * 1000)
        envelope = result.structured_content
        if not isinstance(envelope, dict) or not envelope.get("ok"):
            raise RuntimeError(f"{tool} failed: {envelope}")
        return dict(envelope["result"])


@asynccontextmanager
async def server(run: Run) -> AsyncIterator[Client]:
    script = Path(sys.executable).with_name("knowhow")
    command = [str(script)] if script.exists() else [sys.executable, "-c", ENTRY]
    args = [*command[1:], "serve", "--root", str(run.root), "--index", str(run.index)]
    args.append("--create-root")  # a fresh root for the run
    args += ["-vv"] if run.verbose else []
    params = StdioServerParameters(
        command=command[0],
        args=args,
        cwd=str(REPO),
        env={k: v for k, v in os.environ.items() if k.startswith("KNOWHOW_")},
    )
    with run.log.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            yield client


def step(agent: int, n: int) -> dict[str, Any]:
    tool = ("mm_click", "mm_type", "mm_describe_screen", "mm_click")[n % 4]
    screen = SCREENS[(agent + n) % len(SCREENS)]
    target = {"testId": f"stress-a{agent}-s{n}"}
    record: dict[str, Any] = {
        "tool": {"name": tool, "target": target, "input": dict(target)},
        "outcome": {"ok": n % 7 != 0},
        "observation": {
            "state": {
                "currentScreen": screen,
                "currentUrl": f"chrome-extension://x/home.html#/{screen}",
            },
            "testIds": [{"testId": f"{screen}-continue", "text": "Continue", "visible": True}],
        },
    }
    if tool == "mm_type":
        record["tool"]["input"]["text"] = f"value {n}"
    return record


async def wait_searchable(run: Run, client: Client, session: str, step_id: str, token: str) -> None:
    """Poll the index until the step is in it, then check that a search finds it, by its words
    and by its meaning (a hybrid result has a `similarity` only when its text has a vector).

    The poll asks `mm_knowledge_last` (an index query on the same reader as search, whose cost
    does not depend on the words): polling with the search itself would measure, while the step
    is missing, the query planner's typo expansion of a still-unknown identifier.
    """
    written = time.perf_counter()
    probe = {"n": 3, "scope": {"sessionId": session}}
    while time.perf_counter() - written < FRESHNESS_TIMEOUT:
        steps = (await run.call(client, "mm_knowledge_last", probe))["steps"]
        if step_id in {s["stepId"] for s in steps}:
            run.freshness.append((written, (time.perf_counter() - written) * 1000))
            query = {"query": token, "limit": 10, "scope": {"sessionId": session}}
            page = await run.call(client, "mm_knowledge_search", query)
            found = [r for r in page["results"] if r["stepId"] == step_id]
            if not found:
                run.unsearchable += 1
            elif page["modeUsed"] == "hybrid" and found[0]["similarity"] is None:
                run.without_vector += 1
            return
        await anyio.sleep(POLL_SECONDS)
    run.missed_freshness += 1


async def work(run: Run, client: Client, agent: int, deadline: float) -> None:
    """Record and query until the deadline (one server process's share of the load)."""
    status = await run.call(client, "mm_knowledge_status", {})
    run.servers[agent] = status["pid"]
    flow = FLOWS[agent % len(FLOWS)]
    session = (
        await run.call(client, "mm_knowledge_start_session", {"flowTags": [flow], "goal": "stress"})
    )["sessionId"]
    n = 0
    while time.monotonic() < deadline:
        n += 1
        recorded = await run.call(client, "mm_knowledge_record_step", step(agent, n))
        run.recorded += 1
        if n % FRESHNESS_EVERY == 0:
            await wait_searchable(run, client, session, recorded["stepId"], f"stress-a{agent}-s{n}")
        elif n % 5 == 1:
            await run.call(client, "mm_knowledge_sessions", {"filters": {"flowTag": flow}})
        elif n % 5 == 2:
            await run.call(client, "mm_knowledge_last", {"n": 5})
        elif n % 11 == 3:
            await run.call(client, "mm_knowledge_summarize", {})
        else:
            query = QUERIES[n % len(QUERIES)]
            await run.call(
                client, "mm_knowledge_search", {"query": query, "filters": {"flowTag": flow}}
            )


async def agent_loop(run: Run, agent: int, deadline: float, all_done: "Barrier") -> None:
    """One agent; restarts its server when we killed it, counts any other death as a crash."""
    while True:
        try:
            async with server(run) as client:
                if time.monotonic() < deadline:
                    await work(run, client, agent, deadline)
                await all_done.arrive_and_wait(agent, client, run)
                return
        except Exception as exc:  # the server process went away
            pid = run.servers.get(agent)
            if pid in run.killed:
                run.restarts += 1
                run.servers.pop(agent, None)
                continue
            run.crashes.append(f"agent {agent} (server pid {pid}): {type(exc).__name__}: {exc}")
            return


class Barrier:
    """All agents stop recording; agent 0 then checks the live index while all servers run."""

    def __init__(self, parties: int) -> None:
        self.parties = parties
        self.arrived: set[int] = set()
        self.everyone = anyio.Event()
        self.checked = anyio.Event()

    async def arrive_and_wait(self, agent: int, client: Client, run: Run) -> None:
        self.arrived.add(agent)
        if len(self.arrived) == self.parties:
            self.everyone.set()
        await self.everyone.wait()
        if agent == 0:
            try:
                run.live_check = await settle(run, client)
                alive = [pid for pid in run.servers.values() if pid_alive(pid)]
                run.live_check["serversAlive"] = f"{len(alive)}/{run.processes}"
            finally:
                self.checked.set()
        await self.checked.wait()


def step_files(root: Path) -> int:
    return sum(1 for p in root.glob("*/steps/*.json") if not p.name.startswith("."))


async def settle(run: Run, client: Client) -> dict[str, Any]:
    """Wait until the index has caught up with the files; compare step documents with files."""
    started = time.perf_counter()
    status: dict[str, Any] = {}
    while time.perf_counter() - started < SETTLE_TIMEOUT:
        status = await run.call(client, "mm_knowledge_status", {})
        if status["indexLag"]["pendingSessions"] == 0 and status["documents"]:
            break
        await anyio.sleep(0.1)
    files = step_files(run.root)
    indexed = (status.get("documents") or {}).get("steps")
    return {
        "files": files,
        "indexed": indexed,
        "match": files == indexed,
        "settleSeconds": round(time.perf_counter() - started, 3),
        "skipped": status.get("skippedCount"),
        "failedBatches": status["live"]["failedBatches"],
    }


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


async def kill_writer(run: Run) -> None:
    """SIGKILL the lease holder at `kill_at`, then time how long until another process holds it."""
    if run.kill_at is None:
        return
    await anyio.sleep(run.kill_at)
    victim = writer_pid(run.index)
    if victim is None:
        return
    run.killed.add(victim)
    os.kill(victim, signal.SIGKILL)
    run.killed_at = killed_at = time.perf_counter()
    while time.perf_counter() - killed_at < 30:
        holder = writer_pid(run.index)
        if holder is not None and holder != victim:
            run.takeover_seconds = round(time.perf_counter() - killed_at, 3)
            return
        await anyio.sleep(0.05)


async def final_reconcile(run: Run) -> None:
    """A fresh server reconciles at start-up; its index must hold exactly the step files."""
    async with server(run) as client:
        run.final_check = await settle(run, client)


async def main(run: Run) -> None:
    deadline = time.monotonic() + run.duration
    barrier = Barrier(run.processes)
    started = time.perf_counter()
    async with anyio.create_task_group() as group:
        for agent in range(run.processes):
            group.start_soon(agent_loop, run, agent, deadline, barrier)
        group.start_soon(kill_writer, run)
    run.live_check["wallSeconds"] = round(time.perf_counter() - started, 1)
    await final_reconcile(run)


def pct(values: list[float], p: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 1)


def split_freshness(run: Run) -> tuple[list[float], list[float]]:
    """Steady-state samples, and those of steps written around the kill (until a second
    after the takeover), which wait for the new writer's reconcile."""
    if run.killed_at is None:
        return [ms for _, ms in run.freshness], []
    start = run.killed_at - FAILOVER_MARGIN
    end = run.killed_at + (run.takeover_seconds or 0.0) + FAILOVER_MARGIN
    steady = [ms for at, ms in run.freshness if not start <= at <= end]
    failover = [ms for at, ms in run.freshness if start <= at <= end]
    return steady, failover


def summary(run: Run) -> str:
    fresh, failover = split_freshness(run)
    killed = "no kill" if run.kill_at is None else f"the writer SIGKILLed at {run.kill_at:g} s"
    lines = [
        "## MCP server under load (`scripts/stress_mcp.py`)",
        "",
        f"`python scripts/stress_mcp.py --processes {run.processes} --duration {run.duration:g}`"
        f" — {run.processes} `knowhow serve` processes (stdio, real MCP clients) on one root and "
        f"index; {killed}; {os.cpu_count()} CPUs.",
        "",
        "| measure | value |",
        "|---|---|",
        f"| steps recorded | {run.recorded} ({run.recorded / run.duration:.0f}/s) |",
        f"| freshness (record returned → in the index), steady: p50 / p99 / max | "
        f"{pct(fresh, 0.5)} / {pct(fresh, 0.99)} / {pct(fresh, 1.0)} ms (n={len(fresh)}, "
        f"missed {run.missed_freshness}; indexed but not found by search {run.unsearchable}; "
        f"found by words but without a vector {run.without_vector}) |",
        f"| freshness of steps written around the kill: max | {pct(failover, 1.0)} ms "
        f"(n={len(failover)}) |",
        f"| writer takeover after SIGKILL | {run.takeover_seconds} s |",
        f"| live index at the end: step files / indexed | {run.live_check.get('files')} / "
        f"{run.live_check.get('indexed')} (caught up in {run.live_check.get('settleSeconds')} s) |",
        f"| fresh server after reconciliation: files / indexed | {run.final_check.get('files')} / "
        f"{run.final_check.get('indexed')} |",
        f"| servers alive at the end / restarts after the kill / crashes | "
        f"{run.live_check.get('serversAlive')} / {run.restarts} / {len(run.crashes)} |",
        f"| failed index batches | {run.live_check.get('failedBatches')} |",
        "",
        "| tool | calls | p50 ms | p99 ms |",
        "|---|---|---|---|",
    ]
    for tool, values in sorted(run.latencies.items()):
        lines.append(f"| {tool} | {len(values)} | {pct(values, 0.5)} | {pct(values, 0.99)} |")
    for crash in run.crashes:
        lines.append(f"\ncrash: {crash}")
    return "\n".join(lines) + "\n"


def write_benchmarks(text: str) -> None:
    section = f"{START}\n{text}{END}\n"
    if not BENCHMARKS.exists():
        BENCHMARKS.parent.mkdir(parents=True, exist_ok=True)
        BENCHMARKS.write_text(f"# Benchmarks\n\n{section}")
        return
    current = BENCHMARKS.read_text()
    if START in current and END in current:
        head, rest = current.split(START, 1)
        tail = rest.split(END, 1)[1].lstrip("\n")
        BENCHMARKS.write_text(f"{head}{section}{tail}")
    else:
        BENCHMARKS.write_text(f"{current.rstrip()}\n\n{section}")


def parse() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load")
    parser.add_argument("--kill-at", type=float, default=None, help="default: 40%% of duration")
    parser.add_argument("--no-kill", action="store_true", help="do not kill the writer")
    parser.add_argument("--dir", type=Path, default=None, help="root and index go here (tmp)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--verbose-servers", action="store_true", help="servers log at debug")
    return parser.parse_args()


def cli() -> int:
    args = parse()
    base = args.dir or Path(tempfile.mkdtemp(prefix="knowhow-stress-"))
    base.mkdir(parents=True, exist_ok=True)
    kill_at = None if args.no_kill else (args.kill_at or args.duration * 0.4)
    run = Run(
        args.processes, args.duration, kill_at, base / "root", base / "index", base / "servers.log"
    )
    run.verbose = args.verbose_servers
    anyio.run(main, run)
    text = summary(run)
    sys.stdout.write(text)
    sys.stdout.write(f"\n(servers' stderr: {run.log})\n")
    if args.write:
        write_benchmarks(text)
    healthy = (
        not run.crashes
        and run.live_check.get("match") is True
        and run.final_check.get("match") is True
        and run.missed_freshness == 0
        and run.unsearchable == 0
        and run.without_vector == 0
        and (kill_at is None or run.takeover_seconds is not None)
    )
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(cli())
