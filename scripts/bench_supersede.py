"""Lifecycle benchmark: supersede detection (cost, precision/recall vs the generator), timeline
and session-context latency, and search latency with the superseded filter and salience.

    KNOWHOW_EVAL_DIR=/work/shared/eval .venv/bin/python scripts/bench_supersede.py \
        --steps 100000 [--seed 7] [--work /tmp/knowhow-supersede] [--no-write]
    ... scripts/bench_supersede.py --corpus /tmp/shared-bench/corpus-1m --work /tmp/lc/1m \
        --facts-only 2

Generates the shared corpus (`../shared/eval/gen_corpus.py`) once, or mirrors an existing one
(`--corpus`: a gen_corpus `--out` folder) into `--work` with hard links, so that the decision
files detection writes (by atomic replace) never touch the original; removes any decision files,
rebuilds the index in this process (detection included; a build that detects builds again from
the settled files, see `engine.index.indexer.rebuild`) and rebuilds once more with the decisions on
file (what `knowhow reindex` costs). Reports: build rates, detection seconds, sessions flagged;
the cost of one live batch (judging again the testIds one session's facts touched) as p50/p95
over the newest sessions; precision/recall of the detected decisions;
p50/p95 of timeline (scope session and all) and session context around sampled steps; search
latency over the public queries with superseded steps hidden (default) and shown, interleaved
in one run, and the cost of the salience lookup alone. Timed in process, warm. Results go to
stdout and the bench-supersede-<size> section of docs/benchmarks.md.

`--facts-only N` builds no index: N processes read every session's supersede facts straight
from the records (what indexing collects), then detection runs over all of them and writes the
decision files, and live batches are judged as above. It measures detection where building
the index is the build benchmark's business (1M steps); on one corpus both ways write the same
decision files. `--no-build` measures the index an earlier run left in `--work` (latencies,
live batches, precision/recall), keeping its decision files.

Truth: the generator renames testIds on fixed days (`vocab.json` "renames", plus actions'
`legacy_testId`). A successful click/type/wait_for whose target is such a legacy id (by testId
or by an exact `[data-testid=…]` selector) is what detection should supersede; anything else it
flags is a false positive (e.g. the prototype branch's ids, which never come back after main
moves on, are counted as false positives).
"""

import argparse
import json
import random
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from pathlib import Path

from bench_common import (
    CORPUS_GENERATOR,
    err,
    load_queries,
    machine,
    machine_md,
    out,
    public_queries,
    write_section,
)

from engine import KnowledgeEngine
from engine.core import SearchInput, StepInput, TimelineInput
from engine.index import (
    FactsLedger,
    IndexLayout,
    IndexWriter,
    SessionContext,
    effective_screen,
    rebuild,
    resolve_target,
    write_detected,
)
from engine.query import recalls
from engine.records import FactsCollector, KnowledgeStore, SessionFacts, epoch_ms, scrub_step

BATCH_SAMPLES = 50
STEP_SAMPLES = 300
SEARCH_ROUNDS = 3


def corpus(work: Path, steps: int, seed: int) -> Path:
    folder = work / f"corpus-{steps}-{seed}"
    if not (folder / "truth.jsonl").exists():
        subprocess.run(
            [
                sys.executable,
                str(CORPUS_GENERATOR),
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


def mirrored(corpus_dir: Path, work: Path) -> Path:
    """The root of an existing corpus, mirrored into `work` with hard links (made once)."""
    folder = work / f"mirror-{corpus_dir.name}"
    if not folder.exists():
        partial_copy = work / f".{folder.name}.partial"
        shutil.rmtree(partial_copy, ignore_errors=True)
        work.mkdir(parents=True, exist_ok=True)
        subprocess.run(["cp", "-al", str(corpus_dir), str(partial_copy)], check=True)
        partial_copy.rename(folder)
    return folder / "test-artifacts" / "llm-knowledge"


def legacy_ids() -> set[str]:
    vocab = json.loads((CORPUS_GENERATOR.parent / "vocab.json").read_text())
    ids = {old for old, _day in vocab["renames"].values()}
    ids |= {a["legacy_testId"] for a in vocab["actions"].values() if a.get("legacy_testId")}
    return ids


def truth_and_decisions(ledger: FactsLedger) -> tuple[set[str], set[str]]:
    """The steps detection should supersede (successful interactions on a legacy testId, by
    testId or by an exact `[data-testid=…]` selector: the facts' actions are exactly the
    interactions with a target, their testId resolved that way) and those it superseded."""
    legacy = legacy_ids()
    truth = {
        a.step_id
        for facts in ledger.facts.values()
        for actions in facts.actions.values()
        for a in actions
        if a.ok and a.test_id in legacy
    }
    decided = {step_id for facts in ledger.facts.values() for step_id in facts.detected}
    return truth, decided


def session_facts(root: Path, session_id: str) -> tuple[str, bytes]:
    """A session's supersede facts straight from its records, as indexing collects them
    (`engine.index.documents.step_document`), without analysing any text or building an index: for
    detection at sizes where building the index is the build benchmark's business. On one
    corpus, `--facts-only` and a build must write the same decision files (checked at 100k)."""
    loaded = KnowledgeStore(root).load_session(session_id)
    facts = SessionFacts(session_id)
    collector = FactsCollector(facts)
    context = SessionContext()
    for step in loaded.steps:
        record = scrub_step(step.record, context.refs)
        target = resolve_target(record, context)
        screen = effective_screen(record)
        role, name = (target.role, target.name) if target else (None, None)
        described = target.describe() if target else ""
        collector.add(step.step_id, record, context.screen or screen, screen, role, name, described)
        context.advance(step.record)
    return session_id, facts.encode()


def read_facts(store: KnowledgeStore, workers: int) -> FactsLedger:
    """Every session's facts, read by `workers` processes."""
    ids = store.session_ids()
    with ProcessPoolExecutor(max_workers=workers) as pool:
        rows = dict(pool.map(session_facts, [store.root] * len(ids), ids, chunksize=16))
    return FactsLedger({sid: SessionFacts.decode(sid, data) for sid, data in rows.items()})


def ledger_of(index_dir: Path) -> FactsLedger:
    """The facts of every session as the live generation's manifest holds them."""
    generation = IndexLayout(index_dir).current()
    assert generation is not None
    writer = IndexWriter(generation)
    try:
        return FactsLedger.load(writer.manifest)
    finally:
        writer.close()


def batch_costs(store: KnowledgeStore, ledger: FactsLedger) -> tuple[float, list[float]]:
    """Seconds to index every screen's facts (a live writer's first re-plan of each screen
    after it takes over), then milliseconds per live batch: one session's facts arrive (here:
    leave the ledger and come back unchanged) and the testIds they touch are judged again."""
    started = time.perf_counter()
    for screen in sorted(ledger.by_screen):
        ledger.screen(screen)
    indexing = time.perf_counter() - started
    costs = []
    for session_id in sorted(ledger.facts)[-BATCH_SAMPLES:]:
        facts = ledger.facts[session_id]
        ledger.update(session_id, None)
        ledger.update(session_id, facts)
        started = time.perf_counter()
        changed = write_detected(store, ledger, ledger.take_pending())
        costs.append((time.perf_counter() - started) * 1000)
        assert not changed, "a settled index must re-plan to the same decisions"
    return indexing, costs


def sample_steps(store: KnowledgeStore, n: int, seed: int) -> list[str]:
    """`n` step ids drawn evenly at random from the file listing (no file is parsed)."""
    ids = [
        f"{session_id}/{name.removesuffix('.json')}"
        for session_id in store.session_ids()
        for name in store.step_names(session_id)
    ]
    return random.Random(seed).sample(ids, min(n, len(ids)))


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


def p50_p95(ms: list[float]) -> str:
    p95 = statistics.quantiles(ms, n=20)[-1] if len(ms) > 1 else ms[0]
    return f"{statistics.median(ms):.2f} / {p95:.2f} ms (n={len(ms)})"


def read_latencies(engine: KnowledgeEngine, steps: list[str]) -> dict[str, list[float]]:
    """Timeline (both scopes, 5 before and after) and session context around each step."""
    times: dict[str, list[float]] = {"timeline session": [], "timeline all": [], "context": []}
    for step_id in steps:
        for scope in ("session", "all"):
            request = TimelineInput(anchor=step_id, scope=scope)
            times[f"timeline {scope}"].append(timed(partial(engine.timeline, request)))
        context = StepInput(stepId=step_id)
        times["context"].append(timed(partial(engine.step_context, context)))
    return times


def search_latencies(engine: KnowledgeEngine, queries: list[str]) -> dict[str, list[float]]:
    """Every query with superseded steps hidden and shown, interleaved (same machine state);
    and the salience lookup of a reranked window (100 step ids) alone."""
    hidden, shown = "search, superseded hidden (default)", "search, superseded shown"
    salience = "salience lookup of a 100-step window"
    times: dict[str, list[float]] = {hidden: [], shown: [], salience: []}
    reader = engine.reader
    now = epoch_ms(engine.now().isoformat())
    for _ in range(SEARCH_ROUNDS):
        for query in queries:
            for label, include in ((hidden, False), (shown, True)):
                request = SearchInput(query=query, limit=20, includeSuperseded=include)
                times[label].append(timed(partial(engine.search, request)))
            window = [r.stepId for r in engine.search(SearchInput(query=query, limit=100)).results]
            lookup = partial(recalls, reader.searcher(), reader.schema, window, now)
            times[salience].append(timed(lookup))
    return times


Rows = list[tuple[str, str]]


def built(store: KnowledgeStore, index_dir: Path, seed: int) -> tuple[int, FactsLedger, Rows]:
    """Build (detection included), rebuild with the decisions on file, and read around steps
    and search in the built index: steps indexed, the facts ledger, and the rows."""
    err(f"first build of {store.root} (detection included)")
    started = time.perf_counter()
    report = rebuild(store, index_dir)
    seconds = time.perf_counter() - started
    err(f"first build: {seconds:.1f} s; rebuilding with the decisions on file")
    started = time.perf_counter()
    again = rebuild(store, index_dir)  # `knowhow reindex`: the decisions are on file now
    again_seconds = time.perf_counter() - started
    steps = again.steps_indexed
    err(f"rebuild: {again_seconds:.1f} s; timeline, context and search latencies")
    rows = [
        (
            "first build, no decisions on file (detection, then built again from the settled "
            "files)",
            f"{seconds:.1f} s, {steps / seconds:,.0f} steps/s",
        ),
        ("first detection + writing decision files", f"{report.supersede_seconds:.2f} s"),
        ("sessions flagged", f"{report.sessions_flagged:,}"),
        (
            "rebuild with the decisions on file (`knowhow reindex`)",
            f"{again_seconds:.1f} s, {steps / again_seconds:,.0f} steps/s (detection "
            f"{again.supersede_seconds:.2f} s, {again.sessions_flagged} sessions re-flagged)",
        ),
        *latency_rows(store, index_dir, seed),
    ]
    return steps, ledger_of(index_dir), rows


def latency_rows(store: KnowledgeStore, index_dir: Path, seed: int) -> Rows:
    """Timeline, context and search latencies in a built index (searches computed every
    time: the engine's cache of recent answers is off)."""
    engine = KnowledgeEngine(store.root, index_dir, cache_searches=False)
    reads = read_latencies(engine, sample_steps(store, STEP_SAMPLES, seed))
    queries = [str(q["query"]) for q in load_queries(public_queries())]
    searches = search_latencies(engine, queries)
    return [
        *((f"{name}, p50 / p95", p50_p95(ms)) for name, ms in reads.items()),
        *((f"{name}, p50 / p95", p50_p95(ms)) for name, ms in searches.items()),
    ]


def facts_only(store: KnowledgeStore, workers: int) -> tuple[int, FactsLedger, Rows]:
    """Facts read from the records (no index), then detection over all of them and writing
    the decision files, as a first build's detection does."""
    err(f"reading the facts of {store.root} ({workers} processes)")
    started = time.perf_counter()
    ledger = read_facts(store, workers)
    reading = time.perf_counter() - started
    steps = sum(len(store.step_names(s)) for s in ledger.facts)
    err(f"facts read in {reading:.1f} s; detecting")
    started = time.perf_counter()
    flagged = write_detected(store, ledger)
    detecting = time.perf_counter() - started
    rows = [
        ("reading the facts from the records (not part of detection)", f"{reading:.1f} s"),
        ("first detection over every session + writing decision files", f"{detecting:.2f} s"),
        ("sessions flagged", f"{len(flagged):,}"),
    ]
    return steps, ledger, rows


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--work", type=Path, default=Path("/tmp/knowhow-supersede"))
    parser.add_argument("--corpus", type=Path, help="an existing gen_corpus --out folder")
    parser.add_argument(
        "--facts-only",
        type=int,
        metavar="WORKERS",
        help="no index: read the facts with WORKERS processes, detect, judge live batches",
    )
    parser.add_argument(
        "--no-build",
        action="store_true",
        help="measure the index an earlier run built in --work (its decisions stay on file)",
    )
    parser.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = parser.parse_args()
    root = (
        mirrored(args.corpus, args.work)
        if args.corpus
        else corpus(args.work, args.steps, args.seed)
    )
    store = KnowledgeStore(root)
    index_dir = args.work / f"index-{root.parent.parent.name}"
    if args.no_build:
        ledger = ledger_of(index_dir)
        steps = sum(len(store.step_names(s)) for s in ledger.facts)
        rows = latency_rows(store, index_dir, args.seed)
    else:
        for old in root.glob("*/superseded.json"):  # detection from scratch
            old.unlink()
        if args.facts_only:
            steps, ledger, rows = facts_only(store, args.facts_only)
        else:
            steps, ledger, rows = built(store, index_dir, args.seed)
    err("live batches, precision and recall")
    truth, decided = truth_and_decisions(ledger)
    indexing, costs = batch_costs(store, ledger)
    hits = len(truth & decided)
    rows += [
        ("indexing every screen's facts (a live writer's first re-plans)", f"{indexing:.2f} s"),
        ("live batch (judge again the testIds one session touched), p50 / p95", p50_p95(costs)),
        ("steps superseded (detected)", f"{len(decided):,}"),
        ("truth: successful actions on a later-renamed testId", f"{len(truth):,}"),
        (
            "precision / recall",
            f"{hits / len(decided) if decided else 1.0:.3f} / "
            f"{hits / len(truth) if truth else 1.0:.3f}",
        ),
        ("peak RSS of the benchmark process", f"{peak_rss_mb():,.0f} MB"),
    ]
    title = "supersede detection" if args.facts_only else "supersede, timeline, session context"
    body = (
        f"## Lifecycle: {title} ({steps:,} steps, {root.parent.parent.name})\n\n"
        + machine_md(machine())
        + "\n| measure | value |\n|---|---|\n"
        + "".join(f"| {name} | {value} |\n" for name, value in rows)
    )
    out(body)
    if not args.no_write:
        size = f"{steps / 1e6:.0f}m" if steps >= 1_000_000 else f"{steps // 1000}k"
        write_section(f"bench-supersede-{size}", body)


if __name__ == "__main__":
    main()
