"""Where a searcher's resident memory goes: an RSS breakdown at points of a batch search.

    .venv/bin/python scripts/bench_memory.py --root ROOT --index INDEX --queries FILE
        [--mode hybrid] [--k 20]

Why it exists: peak RSS (`/usr/bin/time -v`) is one number, and at 1M most of it is not memory
the process allocated: Tantivy memory-maps its segment files, and every page of them a search
touches counts in RSS while being the kernel's page cache (shared, dropped under pressure).
This script answers the queries as `knowhow batch-search` does (one engine, search cache off,
model loaded before the first query) and reads `/proc/self/smaps` after importing the engine,
after opening the index, after loading the model, after the first search and after every
query: resident memory split into anonymous (heap, the libraries' own allocations) and
file-backed, and grouped by what it belongs to (index files by extension, the vectors, the
shared libraries). Linux only. Standard library + the engine only (bench_common imports the
server, which a searcher does not: its modules would count here); output is a markdown table.
"""

import argparse
import json
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path

from engine import KnowledgeEngine, SearchInput

LIBRARIES = ("onnxruntime", "tokenizers", "tantivy", "openblas", "numpy", "python3", "sqlite")
"""Shared libraries reported on their own (every other one is `other libraries`)."""


def out(line: str = "") -> None:
    sys.stdout.write(line + "\n")


def category(mapping: str, index: Path) -> str:
    """What a line of /proc/self/maps belongs to."""
    if not mapping:
        return "anonymous mappings"
    if mapping == "[heap]":
        return "heap"
    if mapping.startswith(str(index)):
        name = Path(mapping).name
        if name.startswith("vectors."):
            return "vectors"
        return "index ." + name.rsplit(".", 1)[-1]
    if ".so" in mapping:
        library = next((lib for lib in LIBRARIES if lib in mapping), None)
        return f"lib {library}" if library else "other libraries"
    return "other"


def breakdown(index: Path) -> dict[str, tuple[int, int]]:
    """Resident and anonymous kB per category, from /proc/self/smaps."""
    rss: dict[str, int] = defaultdict(int)
    anon: dict[str, int] = defaultdict(int)
    current = ""
    with open("/proc/self/smaps", encoding="utf-8") as smaps:
        for line in smaps:
            head = line.split(None, 1)[0]
            if "-" in head and not head.endswith(":"):  # a mapping's header line
                fields = line.split(None, 5)
                current = category(fields[5].strip() if len(fields) > 5 else "", index)
            elif head == "Rss:":
                rss[current] += int(line.split()[1])
            elif head == "Anonymous:":
                anon[current] += int(line.split()[1])
    return {name: (rss[name], anon[name]) for name in rss}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--queries", type=Path, required=True, help="JSONL with {query} lines")
    ap.add_argument("--mode", default="hybrid", choices=("hybrid", "keyword", "semantic"))
    ap.add_argument("--k", type=int, default=20)
    args = ap.parse_args()
    index = args.index.resolve()
    points: list[tuple[str, dict[str, tuple[int, int]]]] = [("engine imported", breakdown(index))]
    engine = KnowledgeEngine(args.root, args.index, cache_searches=False)
    engine.refresh()
    points.append(("index open", breakdown(index)))
    if args.mode != "keyword":
        engine.semantic()
        points.append(("model loaded", breakdown(index)))
    lines = args.queries.read_text(encoding="utf-8").splitlines()
    queries = [json.loads(line)["query"] for line in lines if line.strip()]
    cpu = time.process_time()
    for number, query in enumerate(queries, 1):
        engine.search(SearchInput(query=query, limit=args.k, mode=args.mode))
        if number in (1, len(queries)):
            points.append((f"after {number} search{'es' if number > 1 else ''}", breakdown(index)))
    cpu_ms = (time.process_time() - cpu) * 1000 / max(1, len(queries))
    report(points, args.mode, cpu_ms)


def report(points: list[tuple[str, dict[str, tuple[int, int]]]], mode: str, cpu_ms: float) -> None:
    final = points[-1][1]
    names = sorted(final, key=lambda name: -final[name][0])
    labels = [label for label, _ in points]
    out(f"mode {mode}: resident MB (anonymous MB) per category; CPU {cpu_ms:.1f} ms per search")
    out("")
    out("| category | " + " | ".join(labels) + " |")
    out("|---|" + "---|" * len(labels))
    for name in names:
        cells = [_mb(*sample.get(name, (0, 0))) for _, sample in points]
        out(f"| {name} | " + " | ".join(cells) + " |")
    totals = [_mb(sum(r for r, _ in s.values()), sum(a for _, a in s.values())) for _, s in points]
    out("| **total** | " + " | ".join(totals) + " |")
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out("")
    out(f"peak RSS of the process: {peak_mb:.0f} MB")


def _mb(rss_kb: int, anon_kb: int) -> str:
    return f"{rss_kb / 1024:.1f} ({anon_kb / 1024:.1f})"


if __name__ == "__main__":
    sys.exit(main())
