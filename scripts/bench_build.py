"""Build throughput: `knowhow reindex` of a knowledge root into an empty index dir, and where
its CPU goes (the target: >= 5,000 steps/s end to end at 100k and 1M).

    KNOWHOW_EVAL_DIR=/work/shared/eval .venv/bin/python scripts/bench_build.py \\
        --root CORPUS/test-artifacts/llm-knowledge --work /tmp/bench-build [--write]

Or `--steps N` to generate a corpus (gen_corpus.py, seed 7) under WORK. The root is indexed
through a hard-linked private copy without the decision files an earlier build wrote into the
root (`superseded.json`): the timed build is the first build of a corpus as it was generated,
supersede detection included (earlier such a build built twice, and this script timed
a second build instead). Reported, for one timed build:
- engine seconds (the report's), wall seconds, steps/s;
- CPU seconds of the whole machine during the build (the analysis workers are a fork server's
  children, which the build process does not wait for: run it on a quiet machine), and CPU
  per step (on two idle cores the rate is bounded by 2 / CPU per step);
- peak RSS (the largest process), distinct embedded texts and steps per text;
- embedding CPU per distinct text: the generation's texts embedded again in this process;
- analysis CPU per step: reading and analysing the first sessions in this process (warm).
Compare two trees by running each with its own environment's python (`<tree>/.venv/bin/python`:
an editable install's import hook wins over `PYTHONPATH`), in the same window
(`--analysis-only` measures just the last item, quickly, without building).
"""

import argparse
import os
import shutil
import time
from pathlib import Path

from bench_common import (
    as_generated_copy,
    err,
    fmt,
    knowhow_cmd,
    last_json,
    machine,
    machine_md,
    md_table,
    out,
    run,
    write_section,
)

SECTION = "bench-build"


def reindex(root: Path, index: Path, log: Path) -> dict[str, float]:
    """One `knowhow reindex --json` into an empty `index`."""
    shutil.rmtree(index, ignore_errors=True)
    cmd = [*knowhow_cmd(), "reindex", "--root", str(root), "--index", str(index), "--json"]
    load = os.getloadavg()[0]
    p = run(cmd, log, measure_rss=True)
    info = last_json(p.stdout)
    if not p.ok or not info:
        raise SystemExit(f"reindex failed (exit {p.rc}), see {log}")
    result = info["result"]
    assert isinstance(result, dict)
    steps = int(result["steps"])
    return {
        "steps": steps,
        "engine_s": float(result["seconds"]),
        "wall_s": p.wall_s,
        "cpu_s": p.machine_cpu_s if p.machine_cpu_s is not None else p.cpu_s,
        "rss_mb": (p.max_rss_kb or 0) / 1024,
        "flagged": int(result["sessionsFlagged"]),
        "load": load,
    }


def embedding_cost(generation: Path) -> tuple[int, float]:
    """(distinct texts, CPU ms per text) of embedding the generation's texts again."""
    import orjson

    from engine.embedding import TEXTS_FILE, embedder_for

    lines = (generation / TEXTS_FILE).read_bytes().splitlines()
    texts = [str(orjson.loads(line)[1]) for line in lines]
    embedder = embedder_for(len(texts))  # as the build's commit embeds them
    embedder.embed(texts[:32])  # warm-up
    started = time.process_time()
    embedder.embed(texts)
    return len(texts), (time.process_time() - started) * 1000 / max(1, len(texts))


def analysis_cost(root: Path, sessions: int) -> float:
    """CPU ms per step of reading and analysing the first sessions in this process (after a
    warm-up, set up as a build worker is): what each build worker spends per step."""
    from engine.index import prepare_session, start_worker
    from engine.records import KnowledgeStore

    ids = KnowledgeStore(root).session_ids()[:sessions]
    for session_id in ids[:20]:
        prepare_session(root, session_id)
    start_worker()
    started = time.process_time()
    steps = sum(prepare_session(root, session_id).steps for session_id in ids)
    return (time.process_time() - started) * 1000 / max(1, steps)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--root", type=Path, help="a knowledge root (llm-knowledge folder)")
    source.add_argument("--steps", type=int, help="generate a corpus of this many steps")
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-build"))
    parser.add_argument("--write", action="store_true", help="write docs/benchmarks.md")
    parser.add_argument("--sessions", type=int, default=200, help="sessions analysed apart")
    parser.add_argument(
        "--analysis-only", action="store_true", help="only the analysis CPU per step (no build)"
    )
    args = parser.parse_args()
    if args.analysis_only and args.root:
        out(f"analysis CPU ms/step: {analysis_cost(args.root, args.sessions):.3f}")
        return
    args.work.mkdir(parents=True, exist_ok=True)
    if args.steps:
        from bench_common import ensure_corpus

        corpus = ensure_corpus(args.work, args.steps, 7).parents[1]
    else:
        corpus = args.root.resolve().parents[1]
    root = as_generated_copy(corpus, args.work / "root-copy")
    index = args.work / "index"
    err("timed build")
    build = reindex(root, index, args.work / "logs" / "build.log")
    generation = next(index.glob("gen-*"))
    texts, embed_ms = embedding_cost(generation)
    analysis_ms = analysis_cost(root, args.sessions)
    steps = build["steps"]
    row = [
        f"{steps:,}",
        f"{build['engine_s']:.1f} / {build['wall_s']:.1f}",
        fmt(steps / build["engine_s"], 0),
        f"{build['cpu_s']:.1f}",
        fmt(build["cpu_s"] * 1000 / steps, 3),
        fmt(build["rss_mb"], 0),
        f"{texts:,} ({steps / max(1, texts):.0f})",
        fmt(embed_ms, 1),
        fmt(analysis_ms, 3),
        fmt(build["load"], 1),
    ]
    headers = [
        "steps",
        "engine / wall s",
        "steps/s",
        "CPU s",
        "CPU ms/step",
        "peak RSS MB",
        "distinct texts (steps per text)",
        "embed CPU ms/text",
        "analysis CPU ms/step",
        "load",
    ]
    table = md_table(headers, [row])
    out(table)
    if args.write:
        body = "## Build throughput (`scripts/bench_build.py`)\n\n" + machine_md(machine())
        write_section(SECTION, body + "\n" + table)


if __name__ == "__main__":
    main()
