"""The embedding model as the engine runs it (integer products) against its float graph (the
vector space of older indexes): CPU per text, per query, how close the vectors are; and, each
in a fresh process, load time and resident memory.

    .venv/bin/python scripts/bench_model.py --texts INDEX/gen-NNNN/vectors.texts
        [--queries FILE] [--limit 800] [--rounds 3] [--base-python OTHER/.venv/bin/python]

Why it exists: `engine.embedding.model_graph.integer_matmuls` trades exact float products for speed
and memory, and the machine is shared: both graphs of the same packaged model run here in one
process, alternating which goes first, on the texts an index embedded (`vectors.texts`, as
the build batches them: `Embedder.embed`) and on queries one at a time (as a search does).
The float graph is the integer one's input (`gather_before_dequantising` alone), loaded with
the engine's session options. `--base-python` (another checkout's interpreter, e.g. main's)
adds load time and RSS of `load_embedder()` in that checkout against this one, in fresh
processes, alternating.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import onnxruntime as ort
import orjson

from engine.embedding import (
    Embedder,
    Vectors,
    load_embedder,
    model_graph,
    model_path,
    session_options,
)

REPO = Path(__file__).resolve().parent.parent
LOAD = """
import json, time
import numpy, onnxruntime, tokenizers
try:
    from engine.embedding import load_embedder
except ImportError:  # a checkout from before engine/ had subpackages
    from engine.embedder import load_embedder
cpu, wall = time.process_time(), time.perf_counter()
load_embedder().embed(["warm up"])
cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
mib = lambda key: int(status[key].split()[0]) / 1024
print(json.dumps({"cpu": cpu, "wall": wall, "rss": mib("VmRSS"), "peak": mib("VmHWM")}))
"""
"""Run by each checkout's interpreter: what loading the model costs after the imports."""


def out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def float_embedder() -> Embedder:
    embedder = Embedder(model_path())
    graph = model_graph.gather_before_dequantising(model_path().read_bytes())
    embedder._session = ort.InferenceSession(
        graph, session_options(ort), providers=["CPUExecutionProvider"]
    )
    return embedder


def query_ms(embedder: Embedder, queries: list[str]) -> tuple[float, float]:
    """Median CPU and wall ms of embedding one query."""
    cpu, wall = [], []
    for query in queries:
        started_cpu, started = time.process_time(), time.perf_counter()
        embedder.embed([query])
        cpu.append((time.process_time() - started_cpu) * 1000)
        wall.append((time.perf_counter() - started) * 1000)
    return statistics.median(cpu), statistics.median(wall)


def neighbours_agree(a: Vectors, b: Vectors, k: int = 10) -> float:
    """Mean share of each text's k nearest texts (by cosine) the two spaces agree on."""
    near_a = np.argsort(-(a @ a.T), axis=1)[:, 1 : k + 1]
    near_b = np.argsort(-(b @ b.T), axis=1)[:, 1 : k + 1]
    return float(np.mean([len(set(x) & set(y)) / k for x, y in zip(near_a, near_b, strict=True)]))


def loads(base_python: Path, rounds: int) -> None:
    runs: dict[str, list[dict[str, float]]] = {"base": [], "this tree": []}
    for round_ in range(rounds):
        order = [("base", base_python), ("this tree", Path(sys.executable))]
        for name, python in order if round_ % 2 == 0 else order[::-1]:
            checkout = python.resolve().parents[2] if name == "base" else REPO
            done = subprocess.run(
                [str(python), "-c", LOAD], cwd=checkout, capture_output=True, text=True, check=True
            )
            runs[name].append(json.loads(done.stdout.strip().splitlines()[-1]))
    out("| model load (fresh process) | wall s | CPU s | RSS after MiB | peak RSS MiB |")
    out("|---|---|---|---|---|")
    for name, measured in runs.items():
        cells = [statistics.median(m[key] for m in measured) for key in ("wall", "cpu")]
        memory = [statistics.median(m[key] for m in measured) for key in ("rss", "peak")]
        out(f"| {name} | {cells[0]:.2f} | {cells[1]:.2f} | {memory[0]:.0f} | {memory[1]:.0f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=Path, required=True)
    parser.add_argument("--queries", type=Path)
    parser.add_argument("--limit", type=int, default=800)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--base-python", type=Path)
    args = parser.parse_args()
    lines = args.texts.read_bytes().splitlines()[: args.limit]
    texts = [str(orjson.loads(line)[1]) for line in lines]
    queries = (
        [str(orjson.loads(line)["query"]) for line in args.queries.read_bytes().splitlines()]
        if args.queries
        else texts[:200]
    )
    embedders = {"float graph": float_embedder(), "integer products": load_embedder()}
    batch: dict[str, list[float]] = {name: [] for name in embedders}
    one: dict[str, list[tuple[float, float]]] = {name: [] for name in embedders}
    vectors: dict[str, Vectors] = {}
    for round_ in range(args.rounds):
        names = list(embedders) if round_ % 2 == 0 else list(embedders)[::-1]
        for name in names:
            started = time.process_time()
            vectors[name] = embedders[name].embed(texts)
            batch[name].append((time.process_time() - started) * 1000 / len(texts))
            one[name].append(query_ms(embedders[name], queries))
    out(f"{len(texts)} texts, {len(queries)} queries, {args.rounds} rounds, load {os.getloadavg()}")
    out()
    out("| graph | CPU ms per text (batched, each round) | query CPU ms (median) | query wall ms |")
    out("|---|---|---|---|")
    for name in embedders:
        rounds = ", ".join(f"{ms:.2f}" for ms in batch[name])
        cpu = statistics.median(c for c, _ in one[name])
        wall = statistics.median(w for _, w in one[name])
        out(f"| {name} | {rounds} | {cpu:.2f} | {wall:.2f} |")
    a, b = vectors["float graph"], vectors["integer products"]
    cosines = np.sum(a * b, axis=1)
    out()
    out(
        f"cosine integer vs float: mean {cosines.mean():.4f}, 1st percentile "
        f"{np.percentile(cosines, 1):.4f}, min {cosines.min():.4f}; the 10 nearest texts of "
        f"a text agree {neighbours_agree(a, b):.1%}"
    )
    if args.base_python:
        out()
        loads(args.base_python, args.rounds)


if __name__ == "__main__":
    main()
