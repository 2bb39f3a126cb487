"""Supersede detection: cost (full build, per live batch) and precision/recall vs the generator.

    python scripts/bench_supersede.py --steps 100000 [--seed 7] [--work /tmp/knowhow-supersede]

Generates the shared corpus (`../shared/eval/gen_corpus.py`) once, rebuilds the index in this
process (detection included) and reports: build rate, detection seconds, sessions flagged;
the cost of one live batch (re-planning the screens one session touched, over every session's
facts) as p50/p95 over the newest sessions; and precision/recall of the detected decisions.

Truth: the generator renames testIds on fixed days (`vocab.json` "renames", plus actions'
`legacy_testId`). A successful click/type/wait_for whose target is such a legacy id (by testId
or by an exact `[data-testid=…]` selector) is what detection should supersede; anything else it
flags is a false positive (e.g. the prototype branch's ids, which never come back after main
moves on, are counted as false positives).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench_common import eval_dir, out

from engine.decisions import DETECTED, FactsLedger, write_detected
from engine.index import IndexLayout, IndexWriter
from engine.indexer import rebuild
from engine.labels import INTERACTION_TOOLS, tool_action
from engine.store import KnowledgeStore
from engine.supersede import selector_test_id

BATCH_SAMPLES = 50


def corpus(work: Path, steps: int, seed: int) -> Path:
    folder = work / f"corpus-{steps}-{seed}"
    if not (folder / "truth.jsonl").exists():
        subprocess.run(
            [
                sys.executable,
                str(eval_dir() / "gen_corpus.py"),
                "--out",
                str(folder),
                "--steps",
                str(steps),
                "--seed",
                str(seed),
                "--force",
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
    return folder / "test-artifacts" / "llm-knowledge"


def legacy_ids() -> set[str]:
    vocab = json.loads((eval_dir() / "vocab.json").read_text())
    ids = {old for old, _day in vocab["renames"].values()}
    ids |= {a["legacy_testId"] for a in vocab["actions"].values() if a.get("legacy_testId")}
    return ids


def truth_and_decisions(store: KnowledgeStore) -> tuple[set[str], set[str]]:
    legacy = legacy_ids()
    truth: set[str] = set()
    decided: set[str] = set()
    for loaded in store.iter_sessions():
        for step in loaded.steps:
            tool = step.record.tool
            if not step.record.outcome.ok or tool.target is None:
                continue
            if tool_action(tool.name) not in INTERACTION_TOOLS:
                continue
            test_id = tool.target.testId or selector_test_id(tool.target.selector)
            if test_id in legacy:
                truth.add(step.step_id)
        decided |= {
            f"{loaded.session_id}/{stem}"
            for stem, d in loaded.decisions.items()
            if d.source == DETECTED
        }
    return truth, decided


def batch_costs(store: KnowledgeStore, index_dir: Path) -> list[float]:
    """Milliseconds to re-plan the screens of one session (what a live batch does)."""
    generation = IndexLayout(index_dir).current()
    assert generation is not None
    writer = IndexWriter(generation)
    try:
        ledger = FactsLedger.load(writer.manifest)
    finally:
        writer.close()
    newest = sorted(ledger.facts)[-BATCH_SAMPLES:]
    costs = []
    for session_id in newest:
        started = time.perf_counter()
        changed = write_detected(store, ledger, ledger.facts[session_id].screens())
        costs.append((time.perf_counter() - started) * 1000)
        assert not changed, "a settled index must re-plan to the same decisions"
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=Path("/tmp/knowhow-supersede"))
    args = parser.parse_args()
    root = corpus(args.work, args.steps, args.seed)
    store = KnowledgeStore(root)
    for old in root.glob("*/superseded.json"):  # detection from scratch
        old.unlink()
    index_dir = args.work / f"index-{args.steps}-{args.seed}"
    started = time.perf_counter()
    report = rebuild(store, index_dir)
    seconds = time.perf_counter() - started
    started = time.perf_counter()
    again = rebuild(store, index_dir)  # `knowhow reindex`: the decisions are on file now
    again_seconds = time.perf_counter() - started
    costs = batch_costs(store, index_dir)
    truth, decided = truth_and_decisions(store)
    hits = len(truth & decided)
    precision = hits / len(decided) if decided else 1.0
    recall = hits / len(truth) if truth else 1.0
    p95 = statistics.quantiles(costs, n=20)[-1] if len(costs) > 1 else costs[0]
    out(f"## Supersede detection ({args.steps:,} steps, seed {args.seed})")
    out("")
    out("| measure | value |")
    out("|---|---|")
    out(
        f"| first build, no decisions on file (detection included) | {seconds:.1f} s, "
        f"{args.steps / seconds:,.0f} steps/s |"
    )
    out(f"| first detection + re-indexing flagged sessions | {report.supersede_seconds:.2f} s |")
    out(f"| sessions flagged | {report.sessions_flagged:,} |")
    out(
        f"| reindex with the decisions on file | {again_seconds:.1f} s, "
        f"{args.steps / again_seconds:,.0f} steps/s (detection {again.supersede_seconds:.2f} s, "
        f"{again.sessions_flagged} sessions re-flagged) |"
    )
    out(
        f"| live batch (re-plan one session's screens), p50 / p95 | "
        f"{statistics.median(costs):.1f} / {p95:.1f} ms (n={len(costs)}) |"
    )
    out(f"| steps superseded (detected) | {len(decided):,} |")
    out(f"| truth: successful actions on a later-renamed testId | {len(truth):,} |")
    out(f"| precision / recall | {precision:.3f} / {recall:.3f} |")


if __name__ == "__main__":
    main()
