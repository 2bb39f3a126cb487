"""Latency of argument completion and resource reads through MCP, on an indexed corpus.

One `knowhow serve` (stdio) on an already indexed root, driven by the SDK's client: every
completable argument (session ids, screens, flowTags, tags, tools, git branches, testIds, a
session's steps) with prefixes of 0 to 3 characters of values the index holds, interleaved with
`resources/templates/list` (the baseline: a constant answer, the protocol's own round trip,
measured in the same run), then the first
`resources/list` page and recipe pages. With --long-session N, a root holding one session of N
steps is made and indexed next to the work folder, and its recipe read at its first and last
page (a bounded page, however long the session).

    .venv/bin/python scripts/bench_completions.py --root R --index I [--long-session 50000]

Writes the `bench-mcp-completions` section of docs/benchmarks.md unless --no-write.
"""

import argparse
import json
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
from bench_common import err, machine, machine_md, md_table, write_section
from mcp import Client, StdioServerParameters, types
from mcp.client.stdio import stdio_client

from engine import KnowledgeEngine
from server.completions import AS_RECORDED, FIELDS, MAX_VALUES

SECTION = "bench-mcp-completions"
ROUNDS = 3
TEMPLATE = "knowhow://sessions/{sessionId}"
STEP_TEMPLATE = "knowhow://steps/{sessionId}/{step}"
PROMPT_ARGUMENTS = {
    "before_screen": ("screen", "flowTag"),
}


def knowhow() -> str:
    return str(Path(sys.executable).with_name("knowhow"))


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


async def timed(action: Callable[[], Awaitable[Any]]) -> tuple[float, Any]:
    start = time.perf_counter()
    answer = await action()
    return (time.perf_counter() - start) * 1000, answer


def requests(known: dict[tuple[str, str], list[str]], session: str) -> list[dict[str, Any]]:
    """Completion requests: each argument with "", and 1..3 characters of its top values."""
    made = []
    for (where, name), values in known.items():
        prefixes = {""} | {v[:n] for v in values[:5] for n in (1, 2, 3)}
        for prefix in sorted(prefixes):
            made.append({"where": where, "name": name, "value": prefix})
    for value in ("", "00", "001"):
        made.append({"where": STEP_TEMPLATE, "name": "step", "value": value, "session": session})
    return made


def ref_of(where: str) -> types.ResourceTemplateReference | types.PromptReference:
    if where.startswith("knowhow://"):
        return types.ResourceTemplateReference(uri=where)
    return types.PromptReference(name=where)


async def measure(
    root: Path, index: Path, log: Path
) -> tuple[dict[str, list[float]], list[dict[str, Any]]]:
    params = StdioServerParameters(
        command=knowhow(), args=["serve", "--root", str(root), "--index", str(index)]
    )
    times: dict[str, list[float]] = {
        "completion": [],
        "templates (baseline)": [],
        "list": [],
        "recipe": [],
    }
    with log.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            known: dict[tuple[str, str], list[str]] = {}
            sessions = await client.complete(ref_of(TEMPLATE), {"name": "sessionId", "value": ""})
            known[(TEMPLATE, "sessionId")] = sessions.completion.values
            for prompt, names in PROMPT_ARGUMENTS.items():
                for name in names:
                    found = await client.complete(ref_of(prompt), {"name": name, "value": ""})
                    known[(prompt, name)] = found.completion.values
            session = sessions.completion.values[0]
            batch = requests(known, session)
            err(f"{len(batch)} completion requests x {ROUNDS} rounds")
            for _ in range(ROUNDS):
                for request in batch:
                    context = {"sessionId": request["session"]} if "session" in request else None
                    ms, _ = await timed(
                        lambda r=request, c=context: client.complete(
                            ref_of(r["where"]), {"name": r["name"], "value": r["value"]}, c
                        )
                    )
                    times["completion"].append(ms)
                    ms, _ = await timed(client.list_resource_templates)
                    times["templates (baseline)"].append(ms)
            for _ in range(10):
                ms, _ = await timed(client.list_resources)
                times["list"].append(ms)
            for sid in sessions.completion.values[:20]:
                uri = f"knowhow://sessions/{sid}/recipe"
                ms, _ = await timed(lambda u=uri: client.read_resource(u))
                times["recipe"].append(ms)
    return times, batch


def in_process(root: Path, index: Path, batch: list[dict[str, Any]]) -> list[float]:
    """The completion's own cost: `term_counts` as the server calls it, without the protocol."""
    engine = KnowledgeEngine(root, index)
    times = []
    for _ in range(ROUNDS):
        for request in batch:
            field = FIELDS[request["name"]]
            prefix = request["value"] if field in AS_RECORDED else request["value"].lower()
            if "session" in request:
                prefix = f"{request['session']}/{prefix}"
            start = time.perf_counter()
            engine.term_counts(field, prefix, MAX_VALUES + 1)
            times.append((time.perf_counter() - start) * 1000)
    return times


def long_session(work: Path, steps: int) -> tuple[Path, Path, str]:
    """A root holding one session of `steps` steps (a click each), indexed."""
    root, index, session = work / "root", work / "index", "mm-long-session-1"
    folder = root / session / "steps"
    if not (work / "indexed").exists():
        folder.mkdir(parents=True, exist_ok=True)
        for n in range(1, steps + 1):
            record = {
                "schemaVersion": 1,
                "timestamp": f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z",
                "sessionId": session,
                "tool": {"name": "mm_click", "target": {"testId": f"button-{n % 50}"}},
                "outcome": {"ok": n % 7 != 0},
                "observation": {"state": {"currentScreen": f"screen-{n // 100 % 20}"}},
            }
            (folder / f"{n:06d}-mm_click.json").write_text(json.dumps(record))
        cmd = [knowhow(), "reindex", "--root", str(root), "--index", str(index), "--json"]
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        (work / "indexed").write_text("")
    return root, index, session


async def read_pages(root: Path, index: Path, session: str, steps: int, log: Path) -> list[float]:
    params = StdioServerParameters(
        command=knowhow(), args=["serve", "--root", str(root), "--index", str(index)]
    )
    last = (steps - 1) // 200 * 200
    times = []
    with log.open("a") as errlog:
        async with Client(stdio_client(params, errlog=errlog)) as client:
            for offset in (0, last) * 5:
                uri = f"knowhow://sessions/{session}/recipe" + (
                    f"?offset={offset}" if offset else ""
                )
                ms, answer = await timed(lambda u=uri: client.read_resource(u))
                assert len(answer.contents) == 2
                times.append(ms)
    return times


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--long-session", type=int, default=0)
    ap.add_argument("--work", type=Path, default=Path("bench-data/completions"))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    log = args.work / "server.log"
    times, batch = anyio.run(measure, args.root, args.index, log)
    times["completion in process (term_counts)"] = in_process(args.root, args.index, batch)
    rows = [
        [kind, str(len(ms)), f"{pct(ms, 0.5):.2f}", f"{pct(ms, 0.95):.2f}", f"{max(ms):.2f}"]
        for kind, ms in times.items()
    ]
    if args.long_session:
        root, index, session = long_session(args.work / "long", args.long_session)
        ms = anyio.run(read_pages, root, index, session, args.long_session, log)
        rows.append([f"recipe page of a {args.long_session:,}-step session", str(len(ms))])
        rows[-1] += [f"{pct(ms, 0.5):.2f}", f"{pct(ms, 0.95):.2f}", f"{max(ms):.2f}"]
    table = md_table(["request", "n", "p50 ms", "p95 ms", "max ms"], rows)
    sys.stdout.write(table)
    ratio = pct(times["completion"], 0.5) / pct(times["templates (baseline)"], 0.5)
    body = (
        "## MCP completions and resource reads\n\n"
        + machine_md(machine())
        + f"- root: `{args.root.name}` ({args.index.name}); one stdio client, requests one at "
        + "a time; `resources/templates/list` (a constant answer) interleaved with the "
        + "completions as the round trip's baseline "
        + f"(completion p50 / baseline p50: {ratio:.2f})\n\n"
        + table
    )
    if not args.no_write:
        write_section(SECTION, body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
