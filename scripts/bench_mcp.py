"""Per-tool MCP latency and freshness (file written → searchable) at 10k and 100k steps.

Why through MCP: an agent pays the whole round trip (JSON-RPC over stdio, validation, the worker
thread, the envelope), not only the engine call that bench_speed.py times. For each size one
`knowhow serve` (stdio) is driven by the SDK's client, as in stress_mcp.py, whose plumbing we
reuse; only one process, so the numbers are latencies, not contention. The corpus is hard-linked
into bench-data/mcp-<N>/ (recording only creates new files, so the shared corpora other
benchmarks use are never changed) and indexed there with `knowhow reindex`.

    .venv/bin/python scripts/bench_mcp.py --sizes 10000,100000

Writes the `bench-mcp-latency` section of docs/benchmarks.md and bench-data/mcp-latency.json
unless --no-write. Waits first for a running bench_speed.py, so the two do not disturb each other.
"""

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
from bench_common import (
    REPO,
    ensure_corpus,
    err,
    knowhow_cmd,
    machine,
    machine_md,
    private_copy,
    public_queries,
    write_json,
    write_section,
)
from bench_common import run as run_cmd
from mcp import Client
from stress_mcp import FLOWS, Run, pct, server, settle, step, wait_searchable

WORK = REPO / "bench-data"
RAW = WORK / "mcp-latency.json"
SECTION = "bench-mcp-latency"
P = "mm_knowledge_"
SCREEN_OF = {  # a screen each flow acts on, for the `screen` filter
    "send": "send",
    "swap": "swap",
    "bridge": "bridge",
    "connect": "connect",
    "sign": "confirm-signature",
    "tx-confirmation": "confirm-transaction",
    "onboarding": "onboarding-create-password",
    "settings": "settings",
}
WARMUP_ROUNDS = 20
STATUS_EVERY = 10  # status is an admin call: one in ten rounds
READY_TIMEOUT = 120.0
WAIT_POLL, WAIT_MAX = 30.0, 30 * 60.0


def wait_for_bench_speed() -> bool:
    """Wait (up to 30 min) for a running bench_speed.py: both saturate this small machine.

    Returns whether it was still running when we gave up (then the numbers say so).
    """
    deadline = time.monotonic() + WAIT_MAX
    while subprocess.run(["pgrep", "-f", "bench_speed.py"], capture_output=True).returncode == 0:
        if time.monotonic() > deadline:
            err("bench_speed.py still running after 30 min; measuring anyway")
            return True
        err("bench_speed.py is running; waiting 30 s")
        time.sleep(WAIT_POLL)
    return False


def prepare(size: int) -> tuple[Path, Path, float]:
    """A private hard-linked copy of the corpus and a fresh index for it (not timed in results)."""
    corpus = ensure_corpus(WORK, size, 7, workers=2).parents[1]
    scratch = WORK / f"mcp-{size}"
    shutil.rmtree(scratch, ignore_errors=True)
    root, index = private_copy(corpus, scratch / "corpus"), scratch / "index"
    cmd = [*knowhow_cmd(), "reindex", "--root", str(root), "--index", str(index)]
    proc = run_cmd(cmd, WORK / "logs" / f"mcp-reindex-{size}.log")
    if not proc.ok:
        raise SystemExit(f"reindex failed, see {proc.log}")
    return root, index, proc.wall_s


async def ready(run: Run, client: Client) -> dict[str, Any]:
    """Wait until this server holds the writer lease and the index has caught up with the files."""
    deadline = time.monotonic() + READY_TIMEOUT
    status: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status = await run.call(client, P + "status", {})
        if status["isWriter"] and status["indexLag"]["pendingSessions"] == 0:
            return status
        await anyio.sleep(0.2)
    raise RuntimeError(f"server not ready within {READY_TIMEOUT:g}s: {status}")


def read_calls(
    i: int, queries: list[dict[str, Any]], sessions: list[str]
) -> list[tuple[str, dict[str, Any]]]:
    """Round i of the read tools, with arguments varied the way agents vary them."""
    q = queries[i % len(queries)]
    flow = q.get("flow") or FLOWS[i % len(FLOWS)]
    filters = [{}, {"flowTag": flow}, {"screen": SCREEN_OF.get(flow, "home")}][i % 3]
    search = {"query": q["query"], "limit": 20} | ({"filters": filters} if filters else {})
    last: dict[str, Any] = {"n": 20, "scope": "all"}
    listing: dict[str, Any] = {"limit": 10}
    if i % 2:
        last["filters"] = listing["filters"] = {"flowTag": flow}
    calls = [
        (P + "search", search),
        (P + "last", last),
        (P + "sessions", listing),
        (P + "summarize", {"scope": {"sessionId": sessions[i % len(sessions)]}}),
    ]
    return calls + ([(P + "status", {})] if i % STATUS_EVERY == 0 else [])


async def measure(run: Run, probe: Run, calls: int, fresh_n: int, out: dict[str, Any]) -> None:
    """Read tools round-robin (noise hits all alike), then recording, then freshness."""
    lines = public_queries().read_text().splitlines()
    queries = [json.loads(line) for line in lines if line.strip()]
    async with server(run) as client:
        started = time.perf_counter()
        status = await ready(run, client)
        out["readySeconds"] = round(time.perf_counter() - started, 2)
        out["sessions"] = status["documents"]["sessions"]
        sessions: list[str] = []
        for flow in FLOWS:
            listed = await run.call(
                client, P + "sessions", {"filters": {"flowTag": flow}, "limit": 50}
            )
            sessions += [s["sessionId"] for s in listed["sessions"]]
        for i in range(WARMUP_ROUNDS):
            for tool, args in read_calls(i, queries, sessions):
                await run.call(client, tool, args)
        run.latencies.clear()
        for i in range(calls):
            for tool, args in read_calls(i, queries, sessions):
                await run.call(client, tool, args)
        goal = {"goal": "bench mcp latency", "flowTags": ["send"], "tags": ["bench"]}
        session = (await run.call(client, P + "start_session", goal))["sessionId"]
        for n in range(1, calls + 1):
            await run.call(client, P + "record_step", step(0, n))
        out["settleBeforeFreshness"] = await settle(probe, client)
        probe.latencies.clear()
        for n in range(1, fresh_n + 1):
            recorded = await probe.call(client, P + "record_step", step(1, n))
            await wait_searchable(probe, client, session, recorded["stepId"], f"stress-a1-s{n}")


def bench_size(size: int, calls: int, fresh_n: int) -> dict[str, Any]:
    root, index, reindex_s = prepare(size)
    log = WORK / "logs" / f"mcp-serve-{size}.log"
    log.unlink(missing_ok=True)
    run, probe = (Run(1, 0.0, None, root, index, log) for _ in range(2))
    out: dict[str, Any] = {"steps": size, "reindexSeconds": round(reindex_s, 1)}
    err(f"measuring {size} steps through MCP ({calls} calls per tool, {fresh_n} freshness)")
    anyio.run(measure, run, probe, calls, fresh_n, out)
    fresh = [ms for _, ms in probe.freshness]
    out["tools"] = {
        tool: {"calls": len(v), "p50": pct(v, 0.5), "p95": pct(v, 0.95), "p99": pct(v, 0.99)}
        for tool, v in sorted(run.latencies.items())
    }
    out["freshness"] = {
        "n": len(fresh),
        "p50": pct(fresh, 0.5),
        "p99": pct(fresh, 0.99),
        "max": pct(fresh, 1.0),
        "missed": probe.missed_freshness,
        "indexedButNotFound": probe.unsearchable,
        "foundWithoutVector": probe.without_vector,
        "rawMs": [round(ms, 1) for ms in fresh],
    }
    # watchdog's inotify queue overflowing loses file events: freshness then waits for a reconcile
    out["inotifyOverflows"] = log.read_text(errors="replace").count("filesystem events were lost")
    out["rawMs"] = {tool: [round(x, 2) for x in v] for tool, v in run.latencies.items()}
    return out


def report(results: list[dict[str, Any]], meta: dict[str, Any]) -> str:
    lines = [
        "## MCP tool latency and freshness (`scripts/bench_mcp.py`)",
        "",
        machine_md(meta).rstrip(),
        "",
        "One `knowhow serve` over stdio, driven by the MCP SDK's client; client-side round trips "
        "after a warm-up, read tools called round-robin with the public queries and varied "
        "filters. Freshness: `record_step` returned → the step is in the index "
        "(`mm_knowledge_last` polled every 10 ms); once it is, a hybrid search must find it by "
        "its words and give it a `similarity` (its text has a vector: searchable by meaning "
        "from the same moment). The machine is shared and noisy: "
        "read the tails with care.",
    ]
    if meta["benchSpeedStillRunning"]:
        lines += ["", "**bench_speed.py was still running during this measurement.**"]
    for r in results:
        f = r["freshness"]
        lines += [
            "",
            f"### {r['steps']:,} steps ({r['sessions']} sessions; reindex {r['reindexSeconds']} s)",
            "",
            "| tool | calls | p50 ms | p95 ms | p99 ms |",
            "|---|---|---|---|---|",
            *(
                f"| {t} | {v['calls']} | {v['p50']} | {v['p95']} | {v['p99']} |"
                for t, v in r["tools"].items()
            ),
            "",
            f"Freshness (n={f['n']}): p50 {f['p50']} ms, p99 {f['p99']} ms, max {f['max']} ms; "
            f"missed (> 10 s) {f['missed']}, indexed but not found by search "
            f"{f['indexedButNotFound']}, found by words but without a vector "
            f"{f['foundWithoutVector']}. Server log: {r['inotifyOverflows']} watchdog "
            "'Inotify queue overflowed' warnings.",
        ]
    return "\n".join(lines) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", default="10000,100000", help="comma-separated step counts")
    parser.add_argument("--calls", type=int, default=200, help="calls per tool (status: 1/10)")
    parser.add_argument("--freshness", type=int, default=100, help="steps timed until searchable")
    parser.add_argument("--no-write", action="store_true", help="leave docs and raw JSON alone")
    parser.add_argument("--no-wait", action="store_true", help="do not wait for bench_speed.py")
    args = parser.parse_args()
    still_running = False if args.no_wait else wait_for_bench_speed()
    meta: dict[str, Any] = machine() | {"benchSpeedStillRunning": still_running}
    sizes = [int(s) for s in args.sizes.split(",")]
    results = [bench_size(size, args.calls, args.freshness) for size in sizes]
    text = report(results, meta)
    sys.stdout.write(text)
    if not args.no_write:
        write_section(SECTION, text)
        write_json(RAW, {"machine": meta, "results": results})
    healthy = all(
        not (f := r["freshness"])["missed"]
        and not f["indexedButNotFound"]
        and not f["foundWithoutVector"]
        for r in results
    )
    return 0 if healthy else 1


if __name__ == "__main__":
    sys.exit(main())
