"""Duplicates and clustering benchmark: their time at 100k steps, and what relatedCount costs a
search.

    KNOWHOW_EVAL_DIR=/work/shared/eval .venv/bin/python scripts/bench_duplicates.py \
        [--steps 100000] [--seed 7] [--work /tmp/knowhow-duplicates] [--index DIR] \
        [--repeats 3] [--no-write]

Generates the shared corpus once (`../shared/eval/gen_corpus.py`) and builds its index with
`knowhow reindex` (vectors and their texts), unless `--index` names one already built from it.
Then, in this process: the first grouping of the store's texts at the default threshold (what
the first duplicates call or search of a process pays per generation); `find_duplicates` for all
types, each type, and at threshold 0.9 (a second grouping); `cluster` for each type at 5 and 50
clusters — medians of `--repeats` warm runs, each on a fresh engine view. Last, keyword and
hybrid search over the public queries with and without `relatedCount`, interleaved in one run:
counted afresh for every query (what the first search after each commit pays) and from the
per-commit cache (what every other search pays). Results go to stdout and the
bench-duplicates section of docs/benchmarks.md.
"""

import argparse
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench_common import (
    ensure_corpus,
    knowhow_cmd,
    load_queries,
    machine,
    machine_md,
    md_table,
    out,
    private_copy,
    public_queries,
    run,
    write_section,
)

from engine import KnowledgeEngine
from engine.core import ClusterInput, DuplicatesInput, SearchInput, validate
from engine.embedding import DEFAULT_THRESHOLD, GroupCache, VectorReader
from engine.index import IndexLayout, IndexReader
from engine.meaning import Related, SemanticLeg
from engine.query import ReadView, TypoVocabulary
from engine.search import search

SEED = 7


def build(work: Path, steps: int, seed: int) -> tuple[Path, Path]:
    """A private copy of the corpus and its freshly built index."""
    corpus = ensure_corpus(work, steps, seed).parents[1]
    root = private_copy(corpus, work / f"root-{steps}")
    index = work / f"index-{steps}"
    shutil.rmtree(index, ignore_errors=True)
    cmd = [*knowhow_cmd(), "reindex", "--root", str(root), "--index", str(index), "--json"]
    if not run(cmd, work / "logs" / f"reindex-{steps}.log").ok:
        raise SystemExit("knowhow reindex failed")
    return root, index


def timed(action: Callable[[], Any], repeats: int) -> float:
    """Median seconds of `repeats` runs."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def operations(engine: KnowledgeEngine, repeats: int) -> list[list[str]]:
    rows = []
    cases: list[tuple[str, Callable[[], Any]]] = []
    for args in ({}, {"types": ["step"]}, {"types": ["screen"]}, {"types": ["session"]}):
        request = validate(DuplicatesInput, args)
        cases.append((f"find_duplicates {args or 'all types'}", partial_call(engine, request)))
    request = validate(DuplicatesInput, {"similarityThreshold": 0.9})
    cases.append(("find_duplicates threshold 0.9 (warm grouping)", partial_call(engine, request)))
    for kind in ("step", "screen", "session"):
        for k in (5, 50):
            cluster = validate(ClusterInput, {"type": kind, "nClusters": k})
            cases.append((f"cluster {kind}, {k} clusters", partial_call(engine, cluster)))
    for name, action in cases:
        result = action()
        size = getattr(result, "total", None) or len(getattr(result, "clusters", []))
        seconds = timed(action, repeats)
        rows.append([name, f"{seconds * 1000:.0f}", str(size), str(result.memories)])
        out(f"{name}: {seconds * 1000:.0f} ms")
    return rows


def partial_call(
    engine: KnowledgeEngine, request: DuplicatesInput | ClusterInput
) -> Callable[[], Any]:
    if isinstance(request, DuplicatesInput):
        return lambda: engine.find_duplicates(request)
    return lambda: engine.cluster(request)


def search_cost(root: Path, index: Path, engine: KnowledgeEngine) -> list[list[str]]:
    """p50/p95 ms of search without relatedCount, with it counted afresh, with it cached."""
    generation = IndexLayout(index).current()
    assert generation is not None
    reader = IndexReader(generation)
    vectors = VectorReader(generation)
    groups = GroupCache(vectors)
    groups.groups(DEFAULT_THRESHOLD).leaders()
    cached = Related(groups, reader.commit)
    leg = engine.semantic()
    queries = [str(q["query"]) for q in load_queries(public_queries())]
    rows = []
    for mode in ("keyword", "hybrid"):
        if mode == "hybrid" and not isinstance(leg, SemanticLeg):
            out(f"hybrid skipped: {leg}")
            continue
        semantic: SemanticLeg | str = leg if mode == "hybrid" else "keyword mode asked for"
        times: dict[str, list[float]] = {"without": [], "afresh": [], "cached": []}
        view = ReadView(reader.searcher(), reader.schema, engine.now())
        typos = TypoVocabulary(view.searcher)
        for _ in range(3):
            for query in queries:
                request = validate(SearchInput, {"query": query, "mode": mode})
                for name, related in (
                    ("without", None),
                    ("afresh", Related(groups, reader.commit)),
                ):
                    started = time.perf_counter()
                    search(view, request, engine.synonyms, typos, semantic, related)
                    times[name].append(time.perf_counter() - started)
                started = time.perf_counter()
                search(view, request, engine.synonyms, typos, semantic, cached)
                times["cached"].append(time.perf_counter() - started)
        for name, values in times.items():
            ordered = sorted(values)
            p50, p95 = statistics.median(ordered), ordered[int(0.95 * len(ordered))]
            rows.append([mode, name, f"{p50 * 1000:.2f}", f"{p95 * 1000:.2f}"])
            out(f"search {mode} relatedCount {name}: p50 {p50 * 1000:.2f} ms p95 {p95 * 1000:.2f}")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--steps", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--work", type=Path, default=Path("/tmp/knowhow-duplicates"))
    ap.add_argument("--root", type=Path, help="with --index: an index already built from it")
    ap.add_argument("--index", type=Path)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    if args.index and args.root:
        root, index = args.root, args.index
    else:
        root, index = build(args.work, args.steps, args.seed)
    engine = KnowledgeEngine(root, index)
    store = VectorReader(engine.reader.path)
    store.refresh()
    started = time.perf_counter()
    GroupCache(store).groups(DEFAULT_THRESHOLD).leaders()
    grouping = time.perf_counter() - started
    counts = engine.document_counts()
    steps = f"{counts['steps']:,} steps in {counts['sessions']:,} sessions"
    out(f"{steps}; {len(store.keys)} distinct texts; first grouping {grouping * 1000:.0f} ms")
    op_rows = operations(engine, args.repeats)
    search_rows = search_cost(root, index, engine)
    body = "\n\n".join(
        [
            "## Duplicates and clusters (`scripts/bench_duplicates.py`)",
            machine_md(machine()),
            f"Index: {steps}, {len(store.keys)} distinct texts in the vector store. "
            f"Grouping all texts at the default threshold (what the first duplicates call of a "
            f"process pays per generation; a search groups only the buckets of its page's "
            f"texts): **{grouping * 1000:.0f} ms**.",
            md_table(["call (warm, median)", "ms", "groups / clusters", "memories"], op_rows),
            "Search with `relatedCount` (public queries × 3, interleaved; *afresh*: counts "
            "recomputed for every query, as after each commit; "
            "*cached*: the same commit, kept per `IndexReader.commit`):",
            md_table(["mode", "relatedCount", "p50 ms", "p95 ms"], search_rows),
        ]
    )
    out(body)
    if not args.no_write:
        write_section("bench-duplicates", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
