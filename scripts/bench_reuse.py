"""Reuse: how many tool calls does remembered knowledge save, and is it right?

    .venv/bin/python scripts/bench_reuse.py --url URL --tasks TASKS.json --root ROOT --index DIR
        [--renamed-url URL] [--screen-rules FILE] [--name APP] [--write]
    .venv/bin/python scripts/bench_reuse.py --serve test-dapp|demo-wallet --root ROOT --index DIR
        [--tasks TASKS.json] [--write]
    .venv/bin/python scripts/bench_reuse.py --overall RESULT.json [RESULT.json ...] [--write]

Each task runs as agent A (reads no knowledge; ROOT starts empty), then as agent B (a new
`knowhow serve`, reading A's knowledge), then — with a renamed variant of the app — as agent
C on it, reading A's and B's. The agent is the deterministic explorer of scripts/explorer/,
over a real stdio server and headless Chromium; the only difference between A and B is whether it
reads knowledge. Prints a table per task and, last, one JSON line:
{"tasks", "completedA", "completedB", "callsA", "callsB", "saved", "top3Precision",
"renamedCorrect"} (definitions: scripts/explorer/scores.py). A task file that is not valid, or a
start page that does not load, stops the run before any browser starts (exit 2).

`--serve` serves a bundled app on a free port (the test dapp needs `make test-dapp`): its URL,
its screen rules, its tasks (scripts/reuse/) and — for the demo wallet — its renamed variant.
`--write` stores ROOT/../reuse-APP.json and the section `bench-reuse-APP` of
docs/benchmarks.md; `--overall` sums such files into `bench-reuse-overall`.
"""

import argparse
import json
import statistics
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio
from bench_common import REPO, err, fmt, machine, machine_md, md_table, out, write_section

from engine import KnowledgeEngine
from engine.history import ScreenContext
from engine.index import effective_screen
from engine.records import KnowledgeStore
from explorer import Report, Task, TaskFileError, check_starts, load_tasks, run_tasks
from explorer.scores import extras, scores
from server.demo import DEMO_APP, demo_app, metamask_test_dapp, metamask_test_dapp_installed

TASKS = REPO / "scripts" / "reuse"
SERVED = {
    "test-dapp": (TASKS / "test-dapp.json", REPO / "engine" / "rules" / "test-dapp.json"),
    "demo-wallet": (TASKS / "demo-wallet.json", DEMO_APP / "screen-rules.json"),
}
RENAMED_VARIANT = "?variant=renamed"
PRIOR_REPEATS = 5


def main() -> int:
    args = parse_args()
    if args.overall:
        return overall(args.overall, args.write)
    try:
        with served(args) as (url, renamed):
            tasks = load_tasks(args.tasks)
            check_starts(tasks, [url, *([renamed] if renamed else [])])
            check_empty(args.root, args.index)
            result = anyio.run(run_all, args, tasks, url, renamed)
    except (TaskFileError, FileNotFoundError) as exc:
        err(f"bench_reuse: {exc}")
        return 2
    if args.write:
        record(args, result)
    out(json.dumps(result["scores"]))
    return 0


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", help="the app's base URL (tasks' starts are relative to it)")
    parser.add_argument("--serve", choices=sorted(SERVED), help="serve a bundled app instead")
    parser.add_argument("--tasks", type=Path, help="the task file (a JSON list)")
    parser.add_argument("--root", type=Path, help="knowledge root (must be empty)")
    parser.add_argument("--index", type=Path, help="index directory (must be empty)")
    parser.add_argument("--renamed-url", help="the app's renamed variant, for agent C")
    parser.add_argument("--screen-rules", type=Path, help="the app's screen rules (JSON)")
    parser.add_argument("--name", help="the app's name in the report (default: from --serve)")
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    parser.add_argument("--overall", nargs="+", type=Path, help="sum earlier result files")
    args = parser.parse_args()
    if args.overall:
        return args
    if bool(args.url) == bool(args.serve):
        parser.error("give exactly one of --url and --serve")
    if args.root is None or args.index is None:
        parser.error("--root and --index are required")
    if args.serve:
        tasks, rules = SERVED[args.serve]
        args.tasks = args.tasks or tasks
        args.screen_rules = args.screen_rules or rules
        args.name = args.name or args.serve
    if args.tasks is None:
        parser.error("--tasks is required with --url")
    args.name = args.name or "app"
    return args


@contextmanager
def served(args: argparse.Namespace) -> Iterator[tuple[str, str | None]]:
    """The app's URL and its renamed variant's: given, or served here for the run."""
    if args.serve is None:
        yield args.url, args.renamed_url
        return
    if args.serve == "test-dapp" and not metamask_test_dapp_installed():
        raise FileNotFoundError("@metamask/test-dapp is not installed: run `make test-dapp`")
    serve = metamask_test_dapp if args.serve == "test-dapp" else demo_app
    with serve() as url:
        yield url, (url + RENAMED_VARIANT if args.serve == "demo-wallet" else None)


def check_empty(root: Path, index: Path) -> None:
    for folder, what in ((root, "--root"), (index, "--index")):
        if folder.exists() and any(folder.iterdir()):
            raise TaskFileError(f"{what} {folder} is not empty: agent A starts with no knowledge")


async def run_all(
    args: argparse.Namespace, tasks: list[Task], url: str, renamed: str | None
) -> dict[str, Any]:
    serve_args = ("--screen-rules", str(args.screen_rules)) if args.screen_rules else ()
    log = args.root.parent / f"bench-reuse-{args.name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    common: dict[str, Any] = {
        "root": args.root,
        "index": args.index,
        "errlog": log,
        "serve_args": serve_args,
    }
    runs: dict[str, list[Report]] = {}
    for agent, app_url, memory in (("A", url, False), ("B", url, True), ("C", renamed, True)):
        if app_url is None:
            continue
        err(f"agent {agent} on {app_url} ({'reads' if memory else 'no'} knowledge)")
        runs[agent] = await run_tasks(tasks, app_url, memory=memory, agent=agent, **common)
    table(tasks, runs)
    return {
        "app": args.name,
        "scores": scores(runs["A"], runs["B"], runs.get("C")),
        "extras": {**extras(runs["A"], runs["B"], runs.get("C")), **prior_cost(args)},
        "tasks": {agent: [r.row() for r in reports] for agent, reports in runs.items()},
    }


def prior_cost(args: argparse.Namespace) -> dict[str, Any]:
    """What priorKnowledge costs a describe with this knowledge: every describe that agents
    B and C made is asked again of the final index, in process and warm (as a serving process
    is), the median of PRIOR_REPEATS timings each. Timing the whole describe call instead would
    mostly measure the page's accessibility snapshot and the machine's load."""
    engine = KnowledgeEngine(args.root, args.index)
    store = KnowledgeStore(args.root)
    contexts = []
    for session_id in store.session_ids():
        loaded = store.load_session(session_id)
        if not {"agent-B", "agent-C"} & set(loaded.metadata.tags):
            continue
        for step in loaded.steps:
            record = step.record
            if record.tool.name.endswith("describe_screen"):
                contexts.append(
                    ScreenContext.seen(
                        record.observation,
                        effective_screen(record),
                        session_id=session_id,
                        flow_tags=loaded.metadata.flowTags,
                    )
                )
    timings = []
    for context in contexts:
        runs = []
        for _ in range(PRIOR_REPEATS):
            started = time.perf_counter()
            engine.prior_knowledge(context)
            runs.append((time.perf_counter() - started) * 1000)
        timings.append(statistics.median(runs))
    p50 = round(statistics.median(timings), 2) if timings else None
    return {"priorP50Ms": p50, "priorContexts": len(timings)}


def table(tasks: list[Task], runs: dict[str, list[Report]]) -> None:
    headers = ["task", "A done", "A calls", "B done", "B calls", "saved", "B top-3 precise"]
    renamed = "C" in runs
    if renamed:
        headers += ["C done", "C calls", "renamed correct"]
    rows = []
    for i, task in enumerate(tasks):
        a, b = runs["A"][i], runs["B"][i]
        saved = 1 - b.calls / a.calls if a.completed and b.completed and a.calls else None
        row = [task.name, _yes(a), str(a.calls), _yes(b), str(b.calls), fmt(saved, 2)]
        row.append(f"{b.precise}/{b.shown}")
        if renamed:
            c = runs["C"][i]
            row += [_yes(c), str(c.calls), f"{c.renamed_correct}/{c.renamed}"]
        rows.append(row)
    out(md_table(headers, rows))


def _yes(report: Report) -> str:
    return "yes" if report.completed else f"no ({report.reason})"


def record(args: argparse.Namespace, result: dict[str, Any]) -> None:
    path = args.root.parent / f"reuse-{args.name}.json"
    path.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    err(f"wrote {path}")
    write_section(f"bench-reuse-{args.name}", section(result))


def section(result: dict[str, Any]) -> str:
    s, x = result["scores"], result["extras"]
    lines = [f"### Reuse on {result['app']}", "", machine_md(machine())]
    rows = []
    for a, b, c in _by_task(result):
        saved = 1 - b["calls"] / a["calls"] if a["completed"] and b["completed"] else None
        rows.append(
            [a["task"], _done(a), str(a["calls"]), _done(b), str(b["calls"]), fmt(saved, 2)]
            + [f"{b['precise']}/{b['shown']}"]
            + ([_done(c), str(c["calls"]), f"{c['renamed_correct']}/{c['renamed']}"] if c else [])
        )
    headers = ["task", "A done", "A calls", "B done", "B calls", "saved", "B top-3 precise"]
    if x["completedC"] is not None:
        headers += ["C done (renamed)", "C calls", "renamed correct"]
    lines += [md_table(headers, rows), _summary(s, x), "```", json.dumps(s), "```"]
    return "\n".join(lines)


def _by_task(result: dict[str, Any]) -> Iterator[tuple[dict[str, Any], ...]]:
    tasks = result["tasks"]
    for i, a in enumerate(tasks["A"]):
        yield a, tasks["B"][i], tasks["C"][i] if "C" in tasks else {}


def _done(row: dict[str, Any]) -> str:
    return "yes" if row["completed"] else "no"


def _summary(s: dict[str, Any], x: dict[str, Any]) -> str:
    renamed = (
        f"; C on the renamed app completed {x['completedC']}/{s['tasks']}, renamed correct "
        f"{fmt(s['renamedCorrect'], 3)}"
        if x["completedC"] is not None
        else ""
    )
    return (
        f"Completed without memory {s['completedA']}/{s['tasks']}, with memory "
        f"{s['completedB']}/{s['tasks']}; calls A {s['callsA']} vs B {s['callsB']} "
        f"(saved {fmt(s['saved'], 3)}); B fell back to exploring in {x['exploredB']} task(s); "
        f"top-3 precision {fmt(s['top3Precision'], 3)}{renamed}. "
        f"priorKnowledge adds {fmt(x['priorP50Ms'], 2)} ms (p50) to a describe with this "
        f"knowledge ({x['priorContexts']} describes of B and C asked again in process). Whole "
        f"`mm_describe_screen` calls, p50 on this loaded machine: {fmt(x['describeP50MsA'], 0)} ms "
        f"for A ({x['describesA']}), {fmt(x['describeP50MsB'], 0)} ms for B "
        f"({x['describesB']}) — mostly the page's accessibility snapshot.\n"
    )


def overall(paths: list[Path], write: bool) -> int:
    results = [json.loads(p.read_text(encoding="utf-8")) for p in paths]
    counted = ("tasks", "completedA", "completedB", "callsA", "callsB")
    total: dict[str, Any] = {key: sum(r["scores"][key] for r in results) for key in counted}
    total["saved"] = _pooled_saved(results)
    total["top3Precision"] = _pooled(results, "B", "precise", "shown")
    total["renamedCorrect"] = _pooled(results, "C", "renamed_correct", "renamed")
    rows = [
        [r["app"], *(fmt(r["scores"][k], 3) if k in FLOATS else str(r["scores"][k]) for k in KEYS)]
        for r in results
    ]
    rows.append(["overall", *(fmt(total[k], 3) if k in FLOATS else str(total[k]) for k in KEYS)])
    body = "### Reuse, all apps\n\n" + md_table(["app", *KEYS], rows)
    out(body)
    if write:
        write_section("bench-reuse-overall", body + "\n```\n" + json.dumps(total) + "\n```")
    out(json.dumps(total))
    return 0


KEYS = ("tasks", "completedA", "completedB", "callsA", "callsB", "saved", "top3Precision")
KEYS += ("renamedCorrect",)
FLOATS = frozenset({"saved", "top3Precision", "renamedCorrect"})


def _pooled(results: list[dict[str, Any]], agent: str, part: str, whole: str) -> float | None:
    rows = [row for r in results for row in r["tasks"].get(agent, [])]
    denominator = sum(row[whole] for row in rows)
    return round(sum(row[part] for row in rows) / denominator, 3) if denominator else None


def _pooled_saved(results: list[dict[str, Any]]) -> float | None:
    pairs = [
        (a, b)
        for r in results
        for a, b in zip(r["tasks"]["A"], r["tasks"]["B"], strict=True)
        if a["completed"] and b["completed"]
    ]
    calls_a = sum(a["calls"] for a, _ in pairs)
    return round(1 - sum(b["calls"] for _, b in pairs) / calls_a, 3) if calls_a else None


if __name__ == "__main__":
    sys.exit(main())
