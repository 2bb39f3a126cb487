"""Record formats benchmark: the same 100k-step corpus in the old and in today's MetaMask
record format, indexed and searched in one run.

    .venv/bin/python scripts/bench_formats.py [--steps 100000] [--rounds 6]
        [--modes keyword,hybrid] [--work bench-data] [--no-write]

Why it exists: today's records (timestamp file names, bare tool names, `run_steps` batches,
`context`, diff-mode observations that are completed from the step before) go through code
paths the old ones do not; the target is indexing speed and search latency within 10 % of the
old format's. The corpus is `gen_corpus.py --seed 7` (old format), converted by the
compatibility suite's writer (`tests/compat/mm_format.convert_root`): the same actions and
observations, with each run of two to five successive clicks, types and waits that worked
written as one `run_steps` batch, as an agent batching them leaves it. Both builds index the
same actions, so indexing speed is compared as the time to build each whole corpus; the
queries are every different query of the public and dev sets, each once. Each round builds a
hard-linked copy of each corpus afresh, without the supersede decisions an earlier build wrote
into it (both builds are first builds, detection included), and runs one `batch-search` per
mode on it, old first in one round and new first in the next; the
medians over rounds are compared, and the median of the rounds' new/old ratios. The machine is
shared: only ratios measured side by side in one run mean much. The run also says how far both
answer alike (a batch stands for the actions it holds). Results go to stdout,
WORK/formats.json and the bench-formats section of docs/benchmarks.md.
"""

import argparse
import json
import shutil
import sys
from pathlib import Path

from bench_common import (
    as_generated_copy,
    ensure_corpus,
    err,
    fmt,
    machine,
    machine_md,
    md_table,
    median,
    out,
    read_run,
    write_json,
    write_section,
)
from bench_speed import SEED, bench_build, bench_search, make_different_queries

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests.compat.mm_format import convert_root

FORMATS = ("old", "new")
TARGET = 0.10
"""New over old may be at most this much slower (build time, search p50)."""
TOP = 10
"""How deep `alike` compares the two formats' answers."""


def new_corpus(old_root: Path, work: Path, steps: int) -> tuple[Path, dict[str, list[str]]]:
    """The corpus in today's format, converted once (a marker tells a finished conversion),
    and which old steps each of its steps holds."""
    folder = work / f"corpus-{steps}-s{SEED}-today"
    root = folder / "test-artifacts" / "llm-knowledge"
    marker, sources = folder / ".bench-complete", folder / "sources.json"
    if marker.exists():
        err(f"converted corpus {folder} exists, reusing")
    else:
        shutil.rmtree(folder, ignore_errors=True)
        err(f"converting {old_root} to today's format in {folder}")
        conversion = convert_root(old_root, root, batches=True)
        sources.write_text(json.dumps(conversion.sources), encoding="utf-8")
        marker.write_text(f"{conversion.counts}\n")
    err(f"today's format: {marker.read_text().strip()}")
    return root, json.loads(sources.read_text(encoding="utf-8"))


def one_round(
    corpora: dict[str, Path], work: Path, queries: Path, modes: list[str], label: int, k: int
) -> dict[str, dict]:
    """Build and search each format once: old first in even rounds, new first in odd ones, so
    neither always runs right after the other's work. The index is removed once searched (the
    run files stay)."""
    results: dict[str, dict] = {}
    for name in FORMATS if label % 2 == 0 else FORMATS[::-1]:
        copy = as_generated_copy(corpora[name].parents[1], work / f"formats-{name}")
        tag = f"formats-{name}-{label}"
        build = bench_build(copy, work, tag)
        searched = {m: bench_search(copy, work, tag, queries, 1, k, m) for m in modes}
        shutil.rmtree(build["index"], ignore_errors=True)
        results[name] = {"build": build, "modes": searched}
    return results


def measures(modes: list[str]) -> list[tuple[str, str]]:
    """(label, key): the build's seconds, then per mode the search p50 and p95 by the clock and
    the median search's CPU time (which a busy machine inflates less). Lower is better."""
    found = [("build s (whole corpus)", "build_s")]
    for mode in modes:
        found += [
            (f"{mode} search p50 ms", f"{mode}_p50_ms"),
            (f"{mode} search p95 ms", f"{mode}_p95_ms"),
            (f"{mode} search CPU p50 ms", f"{mode}_cpu_p50_ms"),
        ]
    return found


def value(result: dict, key: str) -> float:
    """One measure of one format's round (`key` as `measures` names it)."""
    if key == "build_s":
        return float(result["build"]["build_s"])
    mode, stat = key.split("_", 1)
    return float(result["modes"][mode][stat])


def verdicts(rounds: list[dict[str, dict]], modes: list[str]) -> list[list[str]]:
    """One row per measure: the medians over rounds of old and new, and the median of the
    rounds' new/old ratios (paired: both were measured minutes apart, so a machine that got
    busier between rounds moves both); whether new is within the target of old."""
    rows = []
    for label, key in measures(modes):
        old = [value(r["old"], key) for r in rounds]
        new = [value(r["new"], key) for r in rounds]
        ratio = median([n / o for n, o in zip(new, old, strict=True) if o])
        verdict = "PASS" if ratio - 1 <= TARGET else "FAIL"
        rows.append([label, fmt(median(old), 2), fmt(median(new), 2), fmt(ratio, 3), verdict])
    return rows


def alike(work: Path, modes: list[str], sources: dict[str, list[str]]) -> dict[str, str]:
    """Per mode, in the first round: of each query's top `TOP` steps in the old format, the
    share found in the new format's top `TOP` (a batch found counts for the actions it holds),
    averaged over the queries the old format answers."""
    found = {}
    for mode in modes:
        runs = {
            name: read_run(work / "runs" / f"speed-formats-{name}-0-{mode}.run") for name in FORMATS
        }
        shares = []
        for qid, old in runs["old"].items():
            new = {a for step in runs["new"].get(qid, [])[:TOP] for a in sources.get(step, [step])}
            shares.append(sum(step in new for step in old[:TOP]) / len(old[:TOP]))
        found[mode] = f"{sum(shares) / len(shares):.0%} of {len(shares)} queries" if shares else "—"
    return found


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
    ap.add_argument("--rounds", type=int, default=6, help="old/new build+search rounds (median)")
    ap.add_argument("--modes", default="keyword,hybrid")
    ap.add_argument("--k", type=int, default=20, help="results per query")
    ap.add_argument("--work", type=Path, default=Path("bench-data"))
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args()
    work, mach = args.work.resolve(), machine()
    (work / "runs").mkdir(parents=True, exist_ok=True)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    old_root = ensure_corpus(work, args.steps, SEED, workers=2)
    new_root, sources = new_corpus(old_root, work, args.steps)
    corpora = {"old": old_root, "new": new_root}
    queries = make_different_queries(work)
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
    same = alike(work, modes, sources)
    records = {f: int(rounds[0][f]["build"]["steps"]) for f in FORMATS}
    batches = sum(len(held) > 1 for held in sources.values())
    result_md = md_table(["measure", "old format", "today's format", "new/old", "target"], rows)
    same_md = ", ".join(f"{mode}: {share}" for mode, share in same.items())
    out(result_md)
    out(f"steps indexed: old {records['old']:,}, new {records['new']:,} ({batches:,} batches)")
    out(f"old top {TOP} found in the new top {TOP} (mean): {same_md}")
    write_json(
        work / "formats.json",
        {"machine": mach, "args": vars(args) | {"work": str(work)}}
        | {"rounds": rounds, "verdicts": rows, "alike": same, "records": records},
    )
    if not args.no_write:
        body = (
            "## Record formats — the old and today's MetaMask records, side by side\n\n"
            + machine_md(mach)
            + f"- corpus: `gen_corpus.py --seed {SEED}` ({records['old']:,} steps), and the "
            + "same corpus converted to today's format by `tests/compat/mm_format.convert_root` "
            + "(timestamp file names, bare tool names, `context`, `launch`, diff-mode "
            + "observations where they list fewer nodes, and each run of 2-5 successive "
            + f"clicks, types and waits that worked as one `run_steps` batch: {records['new']:,} "
            + f"steps, {batches:,} of them batches)\n"
            + f"- {args.rounds} rounds (old first, then new first, in turn): `reindex` of the "
            + "corpus as generated (no supersede decisions yet) into an empty dir, then one "
            + "`batch-search` per mode (every different query of the "
            + f"public and dev sets, each once, k={args.k}); medians over rounds; `new/old` is "
            + "the median of the rounds' paired ratios. Target: today's format within "
            + f"{TARGET:.0%} of the old (lower is better in every row)\n"
            + f"- the old format's top {TOP} steps found in today's top {TOP} (a batch counts "
            + f"for its actions; mean over queries): {same_md}\n"
            + f"- load average when searching: {load_range(rounds)}\n\n"
            + result_md
        )
        write_section("bench-formats", body)
    return 0 if all(r[4] != "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
