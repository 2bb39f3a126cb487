"""Big text: what one oversized record costs the indexer, a matching search and summarize.

    python scripts/bench_limits.py [--message-mb 10] [--nodes-mb 50] [--runs 5] [--write]

The adversarial run's big-text attacks, on the bundled sample root plus one session of a big step:
- `message`: a step file (written by another program) whose `outcome.error.message` is
  `--message-mb` MB of words; the same text sent through `mm_knowledge_record_step`'s input
  model (what the MCP tool validates, redacts and writes);
- `nodes`: a `--nodes-mb` MB step file whose size is in its accessibility nodes and testIds.
Measured in this process (engine API, no server): build of the whole root, the median of
`--runs` searches whose query matches the big text, and summarize of the big session, with
the bytes of each answer as JSON. Run it against older code with
`PYTHONPATH=<checkout> python scripts/bench_limits.py` to get a same-machine baseline.
"""

import argparse
import json
import random
import shutil
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from bench_common import REPO, err, machine, machine_md, md_table, out, write_section

from engine import (
    InvalidInput,
    KnowledgeEngine,
    KnowledgeStore,
    SearchInput,
    SummarizeInput,
    ensure_index,
    rebuild,
    validate,
)
from server.inputs import RecordStepInput
from server.recording import write_step

SAMPLE = REPO / "server" / "demo" / "sample_root"
BIG_SESSION = "mm-bench-limits-big"
QUERY = "quokka marmot"
"""Words found only in the big text, so the big step is what a search must return."""
MB = 1_000_000


def words(size: int, seed: int) -> str:
    """The query's words, then random words (a 5,000-word vocabulary of `seed`), `size` chars."""
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=rng.randint(3, 10)))]
    vocabulary += ["".join(rng.choices("abcdefghijklmnopqrstuvwxyz", k=7)) for _ in range(5000)]
    vocabulary += QUERY.split()
    parts = QUERY.split()  # first, so whatever part of the text is indexed matches
    length = len(QUERY) + 1
    while length < size:
        word = rng.choice(vocabulary)
        parts.append(word)
        length += len(word) + 1
    return " ".join(parts)[:size]


def step(
    message: str | None, nodes: list[dict[str, Any]], test_ids: list[dict[str, Any]]
) -> dict[str, Any]:
    outcome: dict[str, Any] = {"ok": message is None}
    if message is not None:
        outcome["error"] = {"code": "SWAP_FAILED", "message": message}
    return {
        "schemaVersion": 1,
        "timestamp": "2026-11-20T10:00:00.000Z",
        "sessionId": BIG_SESSION,
        "tool": {"name": "mm_click", "target": {"testId": "swap-button"}},
        "outcome": outcome,
        "observation": {
            "state": {"currentScreen": "swap"},
            "testIds": test_ids,
            "a11y": {"nodes": nodes},
        },
    }


def big_root(work: Path, shape: str, size: int) -> Path:
    """The sample root and a session holding one big step file of `shape`."""
    root = work / f"root-{shape}"
    shutil.copytree(SAMPLE, root)
    steps = root / BIG_SESSION / "steps"
    steps.mkdir(parents=True)
    meta = {"sessionId": BIG_SESSION, "createdAt": "2026-11-20T09:59:00.000Z", "goal": "swap"}
    (root / BIG_SESSION / "session.json").write_bytes(orjson.dumps(meta))
    if shape == "message":
        record = step(words(size, 1), [], [])
    else:
        count, each = 1000, size // 2000
        nodes = [{"ref": f"e{i}", "role": "text", "name": words(each, i)} for i in range(count)]
        ids = [{"testId": f"t-{i}", "text": words(each, count + i)} for i in range(count)]
        record = step("failed", nodes, ids)
    (steps / "0001-mm_click.json").write_bytes(orjson.dumps(record))
    return root


def timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


def answer_bytes(value: Any) -> int:
    return len(orjson.dumps(value.to_json_dict()))


def measure_root(root: Path, work: Path, runs: int) -> dict[str, Any]:
    index = work / f"index-{root.name}"
    build_s, report = timed(lambda: rebuild(KnowledgeStore(root), index))
    engine = KnowledgeEngine(root, index)
    request = SearchInput(query=QUERY, limit=10)
    first_s, page = timed(lambda: engine.search(request))
    searches = [timed(lambda: engine.search(request)) for _ in range(runs)]
    summary_s, recipe = timed(
        lambda: engine.summarize(SummarizeInput(scope={"sessionId": BIG_SESSION}))
    )
    return {
        "file_mb": round(
            (root / BIG_SESSION / "steps" / "0001-mm_click.json").stat().st_size / MB, 1
        ),
        "build_s": build_s,
        "skipped": len(report.skipped),
        "search_first_s": first_s,
        "search_p50_s": statistics.median(s for s, _ in searches),
        "search_bytes": answer_bytes(page),
        "big_step_found": any(r.sessionId == BIG_SESSION for r in page.results),
        "summarize_s": summary_s,
        "summarize_bytes": answer_bytes(recipe),
    }


def measure_record(work: Path, size: int) -> dict[str, Any]:
    """What `mm_knowledge_record_step` does with a big message: validate, prepare, write, and
    the writer's incremental sync that indexes it."""
    root = work / "root-record"
    shutil.copytree(SAMPLE, root)
    index = work / "index-record"
    store = KnowledgeStore(root)
    rebuild(store, index)
    session = "mm-mk7503cd-qnpu07"
    args = {
        "sessionId": session,
        "tool": {"name": "mm_click", "target": {"testId": "swap-button"}},
        "outcome": {"ok": False, "error": {"code": "SWAP_FAILED", "message": words(size, 2)}},
    }
    started = time.perf_counter()
    try:
        request = validate(RecordStepInput, args)
    except InvalidInput as exc:
        answer = str(exc).splitlines()[0][:80]
        return {"outcome": f"rejected: {answer}", "call_s": time.perf_counter() - started}
    write_step(store, request.to_record(session, "2026-11-20T10:00:00Z"))
    call_s = time.perf_counter() - started
    sync_s, _ = timed(lambda: ensure_index(store, index))
    return {"outcome": "written and indexed", "call_s": call_s, "writer_s": sync_s}


def rows_of(label: str, results: dict[str, Any]) -> list[list[str]]:
    rows = []
    for shape in ("message", "nodes"):
        r = results[shape]
        rows.append(
            [
                label,
                f"{shape}: {r['file_mb']} MB step file",
                f"{r['build_s']:.2f}",
                f"{r['search_first_s'] * 1000:.1f}",
                f"{r['search_p50_s'] * 1000:.1f}",
                f"{r['search_bytes']:,}",
                "yes" if r["big_step_found"] else "no",
                f"{r['summarize_s'] * 1000:.1f}",
                f"{r['summarize_bytes']:,}",
            ]
        )
    return rows


def record_line(label: str, results: dict[str, Any], args: argparse.Namespace) -> str:
    record = results["record"]
    writer = f", then the writer's sync {record['writer_s']:.2f} s" if "writer_s" in record else ""
    return (
        f"- {label}: record_step input with a {args.message_mb} MB `outcome.error.message`: "
        f"{record['outcome']} in {record['call_s'] * 1000:.1f} ms{writer}\n"
    )


def report(
    results: dict[str, Any], baseline: dict[str, Any] | None, args: argparse.Namespace
) -> str:
    rows = rows_of("before", baseline) if baseline else []
    rows += rows_of("this code" if baseline is None else "after", results)
    table = md_table(
        [
            "code",
            "root: sample + one big step",
            "build s",
            "first search ms",
            "then p50 ms",
            "search answer B",
            "big step found",
            "summarize ms",
            "summarize answer B",
        ],
        rows,
    )
    lines = record_line("before", baseline, args) if baseline else ""
    return table + "\n" + lines + record_line("after" if baseline else "this code", results, args)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--message-mb", type=float, default=10)
    parser.add_argument("--nodes-mb", type=float, default=50)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    parser.add_argument(
        "--baseline", type=Path, help="results (--json) of older code, shown as 'before'"
    )
    parser.add_argument("--write", action="store_true", help="update docs/benchmarks.md")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="knowhow-limits-") as tmp:
        work = Path(tmp)
        results: dict[str, Any] = {}
        for shape, mb in (("message", args.message_mb), ("nodes", args.nodes_mb)):
            err(f"{shape}: {mb} MB step file")
            results[shape] = measure_root(big_root(work, shape, int(mb * MB)), work, args.runs)
        err("record_step input")
        results["record"] = measure_record(work, int(args.message_mb * MB))
    baseline = json.loads(args.baseline.read_text()) if args.baseline else None
    body = report(results, baseline, args)
    out(body)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    if args.write:
        header = "## Size limits — one big record (`scripts/bench_limits.py`)\n\n"
        write_section("bench-limits", header + machine_md(machine()) + "\n" + body)


if __name__ == "__main__":
    main()
