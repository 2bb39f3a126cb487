"""Search latency of two versions of the engine, paired query by query in one process.

    .venv/bin/python scripts/bench_search_ab.py --root ROOT --index INDEX [--base main]
        [--mode hybrid] [--queries FILE] [--repeats 2 | --first-asked] [--check] [--phases]

Why it exists: on a machine shared by several jobs, two benchmark runs minutes apart see
different loads, and a 10 % change drowns in the noise between them. Here the base version
(`engine/` of the git revision `--base`, imported under another package name) and this tree's
engine answer the same queries in one process on one index, alternating which goes first, so
both see the same load. Reported per version: wall-clock p50/p95 and the CPU time (all threads)
p50 of a search, and the median of the per-query CPU ratio base / this tree (> 1: this tree is
cheaper). `--check` also compares every answer field by field (a speed change must not change
what search returns; floats within float32 rounding). `--first-asked` times each query the
first time it is asked (one round, no warm-up: nothing an earlier ask read is kept for it).
`--phases` then times where each version's search spends its time (the
versions alternating per query again): the CPU per search in each step of it, on the thread
that runs it (nested steps are counted in their parents too; the query embedding and the
semantic candidates' lookup run on the embedding thread: `search (all)` is the
main thread's alone; `embed` and `similarities` are the embedding thread's), and counts the
stored documents a search reads from the doc store (`docs read`, both threads, over one more
pass of the queries on a fresh searcher: documents an engine keeps from its earlier searches,
`engine.query.doc_store_cache`, are not read again). The search cache is off, as in
`knowhow batch-search`.
"""

import argparse
import importlib
import json
import math
import re
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path
from types import ModuleType
from typing import Any

REPO = Path(__file__).resolve().parent.parent
SEARCH = ("engine.search.step_search", "engine.search")
JOIN = ("engine.meaning.join", "engine.meaning")
PHASES = (
    (SEARCH, "plan_query"),
    (SEARCH, "_tiers"),
    (SEARCH, "_rank_tier"),
    (SEARCH, "_dropped_scores"),
    (SEARCH, "recalls"),
    (SEARCH, "with_meaning"),
    (JOIN, "nearest_steps"),
    (JOIN, "semantic_candidates"),
    (JOIN, "_keyword_matches"),
    (JOIN, "fuse"),
    (SEARCH, "page_evidence"),
    (SEARCH, "source_sessions"),
    (("engine.query.session_sources", "engine.sources"), "source_sessions"),
    (SEARCH, "step_row"),
)
"""(module, function) steps of a search timed by `--phases`, patched where they are called
(`source_sessions` also where `SessionSources` calls it: for the sessions it has not kept).
Each module is named as in the layered engine, then as in the flat one before it, so that a
revision of either can be the base."""
METHOD_PHASES = (
    (("engine.embedding.embedder", "engine.embedder"), "Embedder", "embed"),
    (("engine.meaning.semantic_leg", "engine.semantic"), "SemanticLeg", "similarities"),
)
"""(module, class, method) steps timed by `--phases` too: the query's embedding and its cosines
to the stored texts, on the embedding thread."""
BASE_PACKAGE = "engine_base"
_IMPORT = re.compile(r"^(\s*)(from|import) engine(\.|\s)", re.MULTILINE)
_VERSION = re.compile(r"^SCHEMA_VERSION = \d+", re.MULTILINE)


def base_engine(revision: str, into: Path) -> ModuleType:
    """`engine/` of `revision`, extracted under `into` as package `engine_base` (its imports of
    `engine.*` renamed), imported."""
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", revision, "engine"], check=True, capture_output=True
    ).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / BASE_PACKAGE
    (into / "engine").rename(package)
    for source in package.rglob("*.py"):
        text = source.read_text(encoding="utf-8")
        source.write_text(_IMPORT.sub(rf"\1\2 {BASE_PACKAGE}\3", text), encoding="utf-8")
    # Both versions search one index, built by this tree: the base is told its schema version
    # is this tree's. Sound when this tree only added fields (the base ignores them); a change
    # of analysis or of an existing field makes the comparison meaningless (`--check` says).
    from engine.index import SCHEMA_VERSION

    (schema,) = package.rglob("schema.py")  # engine/schema.py, or engine/index/schema.py
    text = schema.read_text(encoding="utf-8")
    schema.write_text(_VERSION.sub(f"SCHEMA_VERSION = {SCHEMA_VERSION}", text), encoding="utf-8")
    sys.path.insert(0, str(into))
    return importlib.import_module(BASE_PACKAGE)


def module_of(package: str, names: tuple[str, ...]) -> ModuleType:
    """The first of `names` (modules of `engine`) that `package`, an engine, holds."""
    for name in names:
        try:
            return importlib.import_module(name.replace("engine", package, 1))
        except ModuleNotFoundError:
            continue
    raise ModuleNotFoundError(f"{package}: none of {names}")


def phases(
    versions: dict[str, tuple[Any, Any, str]], queries: list[str], mode: str, limit: int
) -> dict[str, dict[str, float]]:
    """CPU ms per search spent in each of `PHASES` and `METHOD_PHASES`, and the stored
    documents read per search (`docs read`), per version (name -> engine, request type,
    package), the versions alternating per query; a step a version lacks is left out."""
    spent: dict[str, dict[str, float]] = {name: {} for name in versions}
    reads: dict[str, list[int]] = {name: [0] for name in versions}

    def timed(into: dict[str, float], label: str, function: Any) -> Any:
        def run(*args: Any, **kwargs: Any) -> Any:
            started = time.thread_time()
            try:
                return function(*args, **kwargs)
            finally:
                into[label] = into.get(label, 0.0) + time.thread_time() - started

        return run

    for name, (_, _, package) in versions.items():
        for module_names, function in PHASES:
            module = module_of(package, module_names)
            if hasattr(module, function):
                setattr(module, function, timed(spent[name], function, getattr(module, function)))
        for module_names, class_name, method in METHOD_PHASES:
            owner = getattr(module_of(package, module_names), class_name)
            if hasattr(owner, method):
                setattr(owner, method, timed(spent[name], method, getattr(owner, method)))
    for i, query in enumerate(queries):
        for name in list(versions) if i % 2 == 0 else list(reversed(versions)):
            engine, request, _ = versions[name]
            started = time.thread_time()
            engine.search(request(query=query, limit=limit, mode=mode))
            total = spent[name].get("search (all)", 0.0) + time.thread_time() - started
            spent[name]["search (all)"] = total
    for name, (engine, request, package) in versions.items():  # untimed: the count slows it
        timings = dict(spent[name])
        count_documents(importlib.import_module(f"{package}.index"), reads[name])
        for query in queries:
            engine.search(request(query=query, limit=limit, mode=mode))
        spent[name] = timings
    return {
        name: {label: round(seconds * 1000 / len(queries), 3) for label, seconds in times.items()}
        | {"docs read": round(reads[name][0] / len(queries), 1)}
        for name, times in spent.items()
    }


class CountingSearcher:
    """A searcher that counts the stored documents read through it (`doc`) into `reads`."""

    def __init__(self, searcher: Any, reads: list[int]) -> None:
        self._searcher = searcher
        self._reads = reads

    def doc(self, address: Any) -> Any:
        self._reads[0] += 1
        return self._searcher.doc(address)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._searcher, name)


def count_documents(index: ModuleType, reads: list[int]) -> None:
    """Make the searchers of `index`'s readers count the stored documents read through them:
    one counting searcher per searcher, handed out each time the reader hands out that one, so
    that what an engine keeps per searcher (the documents it read, `engine.query.doc_store_cache`)
    stays kept and only reads of the store are counted."""
    searcher_of = index.IndexReader.searcher
    counting: dict[int, tuple[Any, CountingSearcher]] = {}

    def searcher(reader: Any) -> Any:
        held = searcher_of(reader)
        known = counting.get(id(held))
        if known is None or known[0] is not held:
            known = counting[id(held)] = (held, CountingSearcher(held, reads))
        return known[1]

    index.IndexReader.searcher = searcher


def answer(page: Any) -> Any:
    return page.model_dump(mode="json")


def same_answer(first: Any, second: Any) -> bool:
    """Equal field by field, floats within Tantivy's float32 rounding (a relative 1e-6): a
    score summed in another order (the left-out clauses' BM25 added to the retrieval
    score) differs in its last bits, which no order or shown value depends on."""
    if isinstance(first, float) and isinstance(second, float):
        return math.isclose(first, second, rel_tol=1e-6, abs_tol=1e-9)
    if isinstance(first, dict) and isinstance(second, dict):
        return first.keys() == second.keys() and all(
            same_answer(first[key], second[key]) for key in first
        )
    if isinstance(first, list) and isinstance(second, list):
        return len(first) == len(second) and all(
            same_answer(a, b) for a, b in zip(first, second, strict=True)
        )
    return bool(first == second)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--base", default="main", help="git revision compared with this tree")
    ap.add_argument("--mode", default="hybrid", choices=("keyword", "hybrid", "semantic"))
    ap.add_argument("--queries", type=Path, help="JSONL {query}; default: the public queries")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument(
        "--first-asked",
        action="store_true",
        help="time the warm-up round instead (each query the first time it is asked)",
    )
    ap.add_argument("--limit", type=int, default=20)
    ap.add_argument("--check", action="store_true", help="compare every answer too")
    ap.add_argument("--phases", action="store_true", help="then time this tree's steps")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    from bench_common import load_queries, out, public_queries

    queries = [str(q["query"]) for q in load_queries(args.queries or public_queries())]
    with tempfile.TemporaryDirectory() as tmp:
        base_engine(args.base, Path(tmp))
        versions: dict[str, tuple[Any, Any, str]] = {}
        for name, package in (("base", BASE_PACKAGE), ("this tree", "engine")):
            front = importlib.import_module(package)  # the same names in either layout
            engine = front.KnowledgeEngine(args.root, args.index, cache_searches=False)
            engine.refresh()
            if args.mode != "keyword":
                engine.semantic()
            versions[name] = (engine, front.SearchInput, package)
        wall: dict[str, list[float]] = {name: [] for name in versions}
        cpu: dict[str, list[float]] = {name: [] for name in versions}
        differ = 0
        # The first round warms both up, untimed unless `--first-asked`: then it is the only
        # one, and a query's time includes no reads that an earlier ask of it left behind
        # (`engine.query.doc_store_cache` keeps the documents searches read).
        rounds = 1 if args.first_asked else args.repeats + 1
        for repeat in range(rounds):
            for i, query in enumerate(queries):
                order = list(versions) if (i + repeat) % 2 == 0 else list(reversed(versions))
                answers = {}
                for name in order:
                    engine, request, _ = versions[name]
                    ask = request(query=query, limit=args.limit, mode=args.mode)
                    started, cpu_started = time.perf_counter(), time.process_time()
                    page = engine.search(ask)
                    if repeat or args.first_asked:
                        wall[name].append((time.perf_counter() - started) * 1000)
                        cpu[name].append((time.process_time() - cpu_started) * 1000)
                    answers[name] = answer(page) if args.check else None
                differ += repeat == 0 and not same_answer(answers["base"], answers["this tree"])
    report: dict[str, Any] = {"mode": args.mode, "revision": args.base, "queries": len(queries)}
    for name in versions:
        ordered = sorted(wall[name])
        report[name] = {
            "wall_p50_ms": round(statistics.median(ordered), 2),
            "wall_p95_ms": round(ordered[int(0.95 * len(ordered))], 2),
            "cpu_p50_ms": round(statistics.median(cpu[name]), 2),
        }
    ratios = [b / t for b, t in zip(cpu["base"], cpu["this tree"], strict=True) if t > 0]
    report["cpu_ratio_base_over_this_p50"] = round(statistics.median(ratios), 3)
    if args.check:
        report["answers_that_differ"] = differ
    if args.phases:
        report["phases_cpu_ms_per_search"] = phases(versions, queries, args.mode, args.limit)
    out(json.dumps(report))
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
