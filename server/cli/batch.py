"""`knowhow batch-search`: answer a file of queries with one loaded index, as the benchmarks
and the eval kit do (scripts/bench_quality.py, scripts/bench_speed.py): a TREC run of the
answers, and the latency percentiles of the searches alone on stdout."""

import json
import statistics
import sys
import time
from pathlib import Path
from typing import Annotated, Any, TextIO

import typer

from engine import InvalidInput, KnowhowError, SearchInput, SearchPage, validate
from server.cli.answer import open_engine, run, settings_for
from server.cli.options import IndexOpt, MinSimOpt, ModeOpt, RootOpt, TypeOpt
from server.cli.reading import semantic_options
from server.cli.render import err
from server.gc_policy import settle_for_searching


def batch_search(
    queries: Annotated[Path, typer.Option("--queries", help="JSONL with {qid, query} lines")],
    run_file: Annotated[Path, typer.Option("--run", help="TREC run file to write")],
    k: Annotated[int, typer.Option("--k", help="Results per query (1..100)")] = 100,
    mode: ModeOpt = "hybrid",
    min_similarity: MinSimOpt = None,
    types: TypeOpt = None,
    root: RootOpt = None,
    index_dir: IndexOpt = None,
    coverage_file: Annotated[
        Path | None,
        typer.Option("--coverage", help="JSONL to write each answer's total and coverage to"),
    ] = None,
) -> None:
    """Answer every query of a file with one loaded index; write a TREC run, print latencies."""
    settings = settings_for(root, index_dir)
    items = run(False, lambda: read_queries(queries))
    # Every query is computed: the search cache serves agents asking again, while a file of
    # queries (often repeated) is answered to measure them.
    engine = run(False, lambda: open_engine(settings, cache_searches=False))
    # The index is opened (and in hybrid/semantic mode the model loaded) before the clock
    # starts: the latencies are those of searches, not of starting the process.
    run(False, engine.refresh)
    if mode != "keyword":
        engine.semantic()
    settle_for_searching()
    latencies: list[float] = []
    cpu: list[float] = []
    """CPU time per search (all threads): what a search costs, whatever else runs meanwhile."""
    options = semantic_options(mode, min_similarity, types)
    tag = "knowhow" if mode == "hybrid" else f"knowhow-{mode}"  # the run's name in score.py
    covered: list[str] = []
    with run(False, lambda: _writable(run_file)) as handle:
        for item in items:
            try:
                request = validate(
                    SearchInput, {"query": item.get("query", ""), "limit": k, **options}
                )
            except KnowhowError as exc:
                err.print(f"[yellow]skipped query {item.get('qid')!r}[/yellow]: {exc.message}")
                continue
            started, cpu_started = time.perf_counter(), time.process_time()
            page: SearchPage = run(False, lambda r=request: engine.search(r))  # type: ignore[misc]
            latencies.append((time.perf_counter() - started) * 1000)
            cpu.append((time.process_time() - cpu_started) * 1000)
            rows = [(s.stepId, s.score) for s in page.steps()]
            rows += [(s.sessionId, s.score) for s in page.sessions()]  # types: ["session"]
            for rank, (doc_id, score) in enumerate(rows, 1):
                handle.write(f"{item['qid']} Q0 {doc_id} {rank} {score} {tag}\n")
            said = page.coverage.to_json_dict() if page.coverage else {}
            covered.append(json.dumps({"qid": item["qid"], "total": page.total} | said))
    if coverage_file is not None:
        coverage_file.write_text("".join(f"{line}\n" for line in covered), encoding="utf-8")
    cpu_p50 = round(statistics.median(cpu), 3) if cpu else 0.0
    sys.stdout.write(json.dumps(_percentiles(latencies) | {"cpu_p50_ms": cpu_p50}) + "\n")


def read_queries(path: Path) -> list[dict[str, Any]]:
    """The `{qid, query}` objects of a JSONL file, blank lines skipped; a file that cannot be
    read, or a line that is not such an object, is refused naming it before anything runs or
    is written (a query that is not valid is skipped when its turn comes, by its qid)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput("queries", f"cannot read {path}: {_reason(exc)}") from None
    items = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            item = json.loads(line)
        except json.JSONDecodeError:
            raise InvalidInput("queries", f"line {number} is not JSON: {line[:80]!r}") from None
        if not isinstance(item, dict):
            raise InvalidInput("queries", f'line {number} is not an object {{"qid", "query"}}')
        if not isinstance(item.get("qid"), str | int):
            raise InvalidInput("queries", f"line {number} has no qid (a string or a number)")
        items.append(item)
    return items


def _writable(path: Path) -> TextIO:
    try:
        return path.open("w", encoding="utf-8")
    except OSError as exc:
        raise InvalidInput("run", f"cannot write {path}: {_reason(exc)}") from None


def _reason(exc: Exception) -> str:
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)


def _percentiles(values: list[float]) -> dict[str, float]:
    """The median, p95 and p99 of latencies in milliseconds, rounded to the microsecond."""
    if not values:
        return {"p50_ms": 0.0, "p95_ms": 0.0, "p99_ms": 0.0}
    ordered = sorted(values)

    def pick(p: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(p * len(ordered)))], 3)

    return {
        "p50_ms": round(statistics.median(ordered), 3),
        "p95_ms": pick(0.95),
        "p99_ms": pick(0.99),
    }
