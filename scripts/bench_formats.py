"""Record formats benchmark: the same 100k-step corpus in the old and in today's MetaMask
record format, indexed and searched in one run.

    .venv/bin/python scripts/bench_formats.py [--steps 100000] [--rounds 4] [--queries 200]
        [--modes keyword,hybrid] [--work bench-data] [--no-write]

Why it exists: today's records (timestamp file names, bare tool names, `context`, diff-mode
observations that are completed from the step before) go through code paths the old ones do
not; the target is indexing speed and search latency within 10 % of the old format's. The
corpus is `gen_corpus.py --seed 7` (old format), converted step for step by the compatibility
suite's writer (`tests/compat/mm_format.convert_root`): the same steps and observations, so the
two builds index the same knowledge, and the run checks that both answer every query alike.
Each round builds a hard-linked copy of each corpus afresh (indexing writes supersede decisions
into the root) and runs one `batch-search` per mode on it, old first in one round and new first
in the next; the medians over rounds are compared, and the median of the rounds' new/old
ratios. The machine is shared: only ratios measured side by side in one run mean much. Results
go to stdout, WORK/formats.json and the bench-formats section of docs/benchmarks.md.
"""

import argparse
import sys
from pathlib import Path

from bench_common import (
    ensure_corpus,
    err,
    fmt,
    machine,
    machine_md,
    md_table,
    median,
    out,
    private_copy,
    write_json,
    write_section,
)
from bench_speed import SEED, bench_build, bench_search, make_queries

from engine import KnowledgeStore

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.compat.mm_format import convert_root

FORMATS = ("old", "new")
TARGET = 0.10
"""New over old may be at most this much slower (build rate, search p50)."""


def new_corpus(old_root: Path, work: Path, steps: int) -> Path:
    """The corpus in today's format, converted once (a marker tells a finished conversion)."""
    folder = work / f"corpus-{steps}-s{SEED}-new"
    root = folder / "test-artifacts" / "llm-knowledge"
    marker = folder / ".bench-complete"
    if marker.exists():
        err(f"converted corpus {folder} exists, reusing")
        return root
    err(f"converting {old_root} to today's format in {folder}")
    counts = convert_root(old_root, root)
    marker.write_text(f"{counts}\n")
    return root


def one_round(
    corpora: dict[str, Path], work: Path, queries: Path, modes: list[str], label: int, k: int
) -> dict[str, dict]:
    """Build and search each format once: old first in even rounds, new first in odd ones, so
    neither always runs right after the other's work."""
    results: dict[str, dict] = {}
    for name in FORMATS if label % 2 == 0 else FORMATS[::-1]:
        copy = private_copy(corpora[name].parents[1], work / f"formats-{name}")
        tag = f"formats-{name}-{label}"
        build = bench_build(copy, work, tag)
        searched = {m: bench_search(copy, work, tag, queries, 1, k, m) for m in modes}
        results[name] = {"build": build, "modes": searched}
    return results


MEASURES = [("build steps/s", "steps_per_s", True)]
"""(label, key, higher is better): the build's rate, then each mode's latencies (`measures`)."""


def measures(modes: list[str]) -> list[tuple[str, str, bool]]:
    """The build rate, and per mode the search p50 and p95 by the clock and the median
    search's CPU time (which a busy machine inflates less)."""
    found = list(MEASURES)
    for mode in modes:
        found += [
            (f"{mode} search p50 ms", f"{mode}_p50_ms", False),
            (f"{mode} search p95 ms", f"{mode}_p95_ms", False),
            (f"{mode} search CPU p50 ms", f"{mode}_cpu_p50_ms", False),
        ]
    return found


def value(result: dict, key: str) -> float:
    """One measure of one format's round (`key` as `measures` names it)."""
    if key == "steps_per_s":
        return float(result["build"]["steps_per_s"])
    mode, stat = key.split("_", 1)
    return float(result["modes"][mode][stat])


def verdicts(rounds: list[dict[str, dict]], modes: list[str]) -> list[list[str]]:
    """One row per measure: the medians over rounds of old and new, and the median of the
    rounds' new/old ratios (paired: both were measured minutes apart, so a machine that got
    busier between rounds moves both); whether new is within the target of old."""
    rows = []
    for label, key, higher_is_better in measures(modes):
        old = [value(r["old"], key) for r in rounds]
        new = [value(r["new"], key) for r in rounds]
        ratio = median([n / o for n, o in zip(new, old, strict=True) if o])
        slower = (1 / ratio - 1) if higher_is_better else (ratio - 1)
        target = key == "steps_per_s" or "p50" in key
        verdict = ("PASS" if slower <= TARGET else "FAIL") if target else "not a target"
        rows.append([label, fmt(median(old), 2), fmt(median(new), 2), fmt(ratio, 3), verdict])
    return rows


def same_answers(corpora: dict[str, Path], work: Path, modes: list[str]) -> dict[str, str]:
    """Per mode, how many queries got the same ranked steps (and scores) from both formats in
    the first round, a step named by its session and position (the ids differ)."""
    positions = {name: _positions(root) for name, root in corpora.items()}
    found = {}
    for mode in modes:
        runs = {
            name: _ranked(work / "runs" / f"speed-formats-{name}-0-{mode}.run", positions[name])
            for name in FORMATS
        }
        same = sum(1 for q, ranked in runs["old"].items() if runs["new"].get(q) == ranked)
        found[mode] = f"{same} of {len(runs['old'])}"
    return found


def _positions(root: Path) -> dict[str, tuple[str, int]]:
    """Step id -> (session, position in the session), by the store's own order."""
    store = KnowledgeStore(root)
    return {
        step.step_id: (session_id, at)
        for session_id in store.session_ids()
        for at, step in enumerate(store.load_session(session_id).steps)
    }


def _ranked(run: Path, positions: dict[str, tuple[str, int]]) -> dict[str, list[object]]:
    """A TREC run file as query -> [(step position, score)] in rank order."""
    ranked: dict[str, list[object]] = {}
    for line in run.read_text(encoding="utf-8").splitlines():
        qid, _, step_id, _, score, _ = line.split()
        ranked.setdefault(qid, []).append((positions.get(step_id, step_id), score))
    return ranked


def load_range(rounds: list[dict[str, dict]]) -> str:
    """The 1-minute load averages measured before the searches, lowest to highest."""
    loads = [
        load
        for r in rounds
        for f in FORMATS
        for m in r[f]["modes"].values()
        for load in m["load_1min"]
    ]
    return f"{min(loads):.1f} to {max(loads):.1f}" if loads else "not measured"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=4, help="old/new build+search rounds (median)")
    ap.add_argument("--queries", type=int, default=200, help="public queries cycled to N")
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--k", type=int, default=20, help="results per query")
    ap.add_argument("--work", type=Path, default=Path("bench-data"))
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args()
    work, mach = args.work.resolve(), machine()
    (work / "runs").mkdir(parents=True, exist_ok=True)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    old_root = ensure_corpus(work, args.steps, SEED, workers=2)
    corpora = {"old": old_root, "new": new_corpus(old_root, work, args.steps)}
    queries = make_queries(work, args.queries)
    rounds = []
    for label in range(args.rounds):
        err(f"round {label + 1}/{args.rounds}")
        done = one_round(corpora, work, queries, modes, label, args.k)
        if not all(
            r["build"].get("ok") and all(m.get("ok") for m in r["modes"].values())
            for r in done.values()
        ):
            err("knowhow failed: see the logs under WORK/logs; nothing written")
            return 1
        rounds.append(done)
    rows = verdicts(rounds, modes)
    same = same_answers(corpora, work, modes)
    result_md = md_table(["measure", "old format", "today's format", "new/old", "target"], rows)
    same_md = ", ".join(f"{mode}: {count}" for mode, count in same.items())
    out(result_md)
    out(f"queries answered the same (same steps, order and scores): {same_md}")
    write_json(
        work / "formats.json",
        {"machine": mach, "args": vars(args) | {"work": str(work)}}
        | {"rounds": rounds, "verdicts": rows, "sameAnswers": same},
    )
    if not args.no_write:
        body = (
            "## Record formats — the old and today's MetaMask records, side by side\n\n"
            + machine_md(mach)
            + f"- command: `.venv/bin/python scripts/bench_formats.py --steps {args.steps} "
            + f"--rounds {args.rounds}`\n"
            + f"- corpus: `gen_corpus.py --seed {SEED}` "
            + f"({int(rounds[0]['old']['build']['steps']):,} steps), "
            + "and the same corpus converted step for step to today's format (timestamp file "
            + "names, bare tool names, `context`, `launch`, diff-mode observations where they "
            + "list fewer nodes) by `tests/compat/mm_format.convert_root`\n"
            + f"- {args.rounds} rounds (old first, then new first, in turn): `reindex` into an "
            + "empty dir, then "
            + f"one `batch-search` per mode ({args.queries} public queries cycled, k={args.k}); "
            + "medians over rounds; `new/old` is the median of the rounds' ratios. Target: "
            + f"today's format within {TARGET:.0%} of the old (build rate, search p50)\n"
            + f"- queries answered the same by both (same steps, order and scores): {same_md}\n"
            + f"- load average when searching: {load_range(rounds)}\n\n"
            + result_md
        )
        write_section("bench-formats", body)
    return 0 if all(r[4] != "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
