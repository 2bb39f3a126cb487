"""Record formats benchmark: the same 100k-step corpus in the old and in today's MetaMask
record format, indexed and searched in one run.

    .venv/bin/python scripts/bench_formats.py [--steps 100000] [--rounds 3] [--queries 200]
        [--modes keyword,hybrid] [--work bench-data] [--no-write]

Why it exists: today's records (timestamp file names, bare tool names, `context`, diff-mode
observations that are completed from the step before) go through code paths the old ones do
not; the target is indexing speed and search latency within 10 % of the old format's. The
corpus is `gen_corpus.py --seed 7` (old format), converted step for step by the compatibility
suite's writer (`tests/compat/mm_format.convert_root`): the same steps and observations, so the
two builds index the same knowledge. Rounds alternate old and new (ABAB), each a fresh build
of a hard-linked copy (indexing writes supersede decisions into the root) and `batch-search`
runs per mode; the medians are compared. The machine is shared: only ratios measured side by
side in one run mean much. Results go to stdout, WORK/formats.json and the bench-formats
section of docs/benchmarks.md.
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
    """Build and search each format once (old first, then new)."""
    results: dict[str, dict] = {}
    for name in FORMATS:
        copy = private_copy(corpora[name].parents[1], work / f"formats-{name}")
        tag = f"formats-{name}-{label}"
        build = bench_build(copy, work, tag)
        searched = {m: bench_search(copy, work, tag, queries, 1, k, m) for m in modes}
        results[name] = {"build": build, "modes": searched}
    return results


def summary(rounds: list[dict[str, dict]], modes: list[str]) -> dict[str, dict[str, float]]:
    """Median over rounds of the build rate and each mode's p50 / p95, per format."""
    table: dict[str, dict[str, float]] = {}
    for name in FORMATS:
        row = {"steps": median([r[name]["build"]["steps"] for r in rounds])}
        row["steps_per_s"] = median([r[name]["build"]["steps_per_s"] for r in rounds])
        for mode in modes:
            for key in ("p50_ms", "p95_ms"):
                row[f"{mode}_{key}"] = median([r[name]["modes"][mode][key] for r in rounds])
        table[name] = row
    return table


def verdicts(table: dict[str, dict[str, float]], modes: list[str]) -> list[list[str]]:
    """One row per measure: old, new, new/old and whether new is within the target."""
    rows = []
    measures = [("build steps/s", "steps_per_s", True)]
    measures += [(f"{m} search p50 ms", f"{m}_p50_ms", False) for m in modes]
    measures += [(f"{m} search p95 ms", f"{m}_p95_ms", False) for m in modes]
    for label, key, higher_is_better in measures:
        old, new = table["old"][key], table["new"][key]
        ratio = new / old if old else float("nan")
        slower = (1 / ratio - 1) if higher_is_better else (ratio - 1)
        target = key == "steps_per_s" or key.endswith("p50_ms")
        verdict = ("PASS" if slower <= TARGET else "FAIL") if target else "not a target"
        rows.append([label, fmt(old, 2), fmt(new, 2), fmt(ratio, 3), verdict])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=3, help="old/new build+search rounds (median)")
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
    table = summary(rounds, modes)
    rows = verdicts(table, modes)
    result_md = md_table(["measure", "old format", "today's format", "new/old", "target"], rows)
    out(result_md)
    write_json(
        work / "formats.json",
        {"machine": mach, "args": vars(args) | {"work": str(work)}}
        | {"rounds": rounds, "summary": table, "verdicts": rows},
    )
    if not args.no_write:
        body = (
            "## Record formats — the old and today's MetaMask records, side by side\n\n"
            + machine_md(mach)
            + f"- command: `.venv/bin/python scripts/bench_formats.py --steps {args.steps} "
            + f"--rounds {args.rounds}`\n"
            + f"- corpus: `gen_corpus.py --seed {SEED}` ({int(table['old']['steps']):,} steps), "
            + "and the same corpus converted step for step to today's format (timestamp file "
            + "names, bare tool names, `context`, `launch`, diff-mode observations where they "
            + "list fewer nodes) by `tests/compat/mm_format.convert_root`\n"
            + f"- {args.rounds} rounds, old then new in each: `reindex` into an empty dir, then "
            + f"one `batch-search` per mode ({args.queries} public queries cycled, k={args.k}); "
            + "medians over rounds. Target: today's format within "
            + f"{TARGET:.0%} of the old (build rate, search p50)\n\n"
            + result_md
        )
        write_section("bench-formats", body)
    return 0 if all(r[4] != "FAIL" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
