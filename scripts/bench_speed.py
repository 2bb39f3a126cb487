"""Speed benchmark: build rate, search latency per mode, peak memory and index size at 10k / 100k /
1M steps, and the query embedding time on its own.

    .venv/bin/python scripts/bench_speed.py [--sizes 10000,100000,1000000] [--queries 200]
        [--modes keyword,hybrid] [--work bench-data] [--baselines-max-size 100000] [--repeats 3]
        [--no-write]

Why it exists: the speed targets have to be checked the same way each time, next to the baselines
measured in the same run on the same machine — absolute numbers on a shared, noisy machine mean
little, ratios measured side by side mean more. Targets: keyword mode search p50 <= 5 ms and
p99 <= 30 ms at 100k steps, p50 <= 25 ms at 1M, a searching process <= 300 MB RSS at 1M;
hybrid (the default mode) p50 <= 10 ms and p95 <= 25 ms at 100k, p50 <= 40 ms at 1M, <= 400 MB RSS
at 1M; build >= 5,000 steps/s.
For each size it generates the corpus (scripts/corpus/gen_corpus.py, seed 7), times `knowhow reindex
--json` from scratch, runs `knowhow batch-search --mode M` --repeats times per mode under
/usr/bin/time -v (peak RSS) and takes the median of each percentile, and runs seed_spec03 /
fts5_bm25 (their own load + per-query latency) up to --baselines-max-size: the SPEC-03 scan is far
too slow at 1M. The query embedding (hybrid's share that does not depend on the index size) is timed
apart, in process. The 1-minute load average is recorded before each knowhow search run: the machine
is shared. Results go to stdout, WORK/speed.json and the bench-speed section of docs/benchmarks.md.
"""

import argparse
import json
import os
import re
import shutil
import sys
import time
from pathlib import Path

from bench_common import (
    Proc,
    du_bytes,
    ensure_corpus,
    err,
    eval_dir,
    eval_kit_missing,
    fmt,
    knowhow_cmd,
    last_json,
    load_queries,
    machine,
    machine_md,
    md_table,
    median,
    out,
    public_queries,
    run,
    write_json,
    write_section,
)

SEED = 7
MB = 1024 * 1024
MODES = ("keyword", "hybrid")
LATENCIES = ("p50_ms", "p95_ms", "p99_ms", "cpu_p50_ms")
"""batch-search's wall-clock percentiles, and the CPU time of its median search (less sensitive
to what else runs on a shared machine)."""
# common.latency_line() and the baselines' load/build lines, e.g.
#   "fts5_bm25 per query: n=44 p50=12.62 ms p95=35.97 ms mean=14.76 ms max=38.79 ms"
_LAT = re.compile(r"^(.*): n=(\d+) p50=([\d.]+) ms p95=([\d.]+) ms mean=[\d.]+ ms max=([\d.]+) ms")
_LOAD = re.compile(r"(?:load \(all files, memory mode\)|index build \(read\S+\)) (\d+) ms")


def make_queries(work: Path, n: int) -> Path:
    """The public queries (without the eval kit: our dev set) cycled to n, each with a unique qid
    (run files are keyed by qid)."""
    public = load_queries(public_queries())
    path = work / f"queries-speed-{n}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n):
            q = public[i % len(public)]
            f.write(json.dumps({**q, "qid": f"S{i:04d}-{q['qid']}"}) + "\n")
    return path


DEV_SETS = Path(__file__).resolve().parent / "eval"
"""Our dev query sets (`scripts/eval/`), which the first-asked runs add to the public ones."""


def make_different_queries(work: Path) -> Path:
    """Every different query of the public sets and our dev sets, each once: a search never
    follows an identical one, so nothing a search keeps for the next ones (the stored documents
    it read: `engine.query.doc_store_cache`) serves an ask of the same query. What agents send: the
    same query again within 5 minutes is answered by the search cache instead."""
    kit = [] if eval_kit_missing() else [eval_dir() / "queries_paraphrase_public.jsonl"]
    files = [public_queries(), *kit, *sorted(DEV_SETS.glob("queries_*.jsonl"))]
    seen: dict[str, dict[str, object]] = {}
    for file in files:
        for q in load_queries(file):
            seen.setdefault(str(q["query"]), q)
    path = work / f"queries-different-{len(seen)}.jsonl"
    with open(path, "w", encoding="utf-8") as f:
        for i, q in enumerate(seen.values()):
            f.write(json.dumps({**q, "qid": f"D{i:04d}-{q['qid']}"}) + "\n")
    return path


def read_corpus(root: Path) -> float:
    """Read every file under `root` once, untimed by the build; the seconds it took.

    Why: the build's rate is our code's, not the disk's. This VM's page cache drops files it
    has not read for a while (DAMON reclaim runs here): the 100k corpus (427 MB) took 29 s to
    read from disk and 3 s from the cache, and the 1M corpus (4.2 GB) built at 4,474 / 4,437
    steps/s while read from disk, 6,723 once read (docs/benchmarks.md, build throughput). The
    seconds are shown beside the build: many of them mean the files came from disk."""
    started = time.perf_counter()
    for folder, _, names in os.walk(root):
        for name in names:
            with open(os.path.join(folder, name), "rb") as f:
                while f.read(1 << 20):
                    pass
    return time.perf_counter() - started


def bench_build(root: Path, work: Path, size: int | str) -> dict:
    """Full rebuild into an empty dir (wall and engine seconds, index size), after reading
    the corpus once (`read_corpus`)."""
    index = work / f"index-speed-{size}"
    shutil.rmtree(index, ignore_errors=True)
    read_s = read_corpus(root)
    err(f"[{size}] knowhow reindex (corpus read first in {read_s:.1f} s)")
    cmd = [*knowhow_cmd(), "reindex", "--root", str(root), "--index", str(index), "--json"]
    p = run(cmd, work / "logs" / f"kh-reindex-{size}.log", measure_rss=True)
    info = (last_json(p.stdout) or {}).get("result") or {}  # the {"ok", "result"} envelope
    res: dict = {"ok": p.ok, "build_wall_s": p.wall_s, "build_json": info, "index": str(index)}
    res["corpus_read_s"] = read_s
    res["build_rss_mb"] = p.max_rss_kb / 1024 if p.max_rss_kb else None
    if not p.ok:
        return res
    steps, secs = float(info.get("steps", 0) or 0), float(info.get("seconds", 0) or 0)
    res["steps"] = steps
    res["build_s"] = secs or p.wall_s
    res["steps_per_s"] = steps / res["build_s"] if res["build_s"] else None
    res["steps_per_s_wall"] = steps / p.wall_s if p.wall_s else None
    res["index_mb"] = du_bytes(index) / MB
    return res


def bench_search(
    root: Path,
    work: Path,
    size: int | str,
    queries: Path,
    repeats: int,
    k: int,
    mode: str,
    tag: str = "",
) -> dict:
    """`repeats` batch-search runs in one mode: median of each percentile, highest peak RSS
    (`tag`: added to the names of the run's files)."""
    index = work / f"index-speed-{size}"
    lat: list[dict] = []
    rss: list[float] = []
    loads: list[float] = []
    for r in range(repeats):
        err(f"[{size}] knowhow batch-search --mode {mode} {r + 1}/{repeats}")
        cmd = [*knowhow_cmd(), "batch-search", "--root", str(root), "--index", str(index)]
        run_file = work / "runs" / f"speed-{size}-{mode}{tag}.run"
        cmd += ["--queries", str(queries), "--run", str(run_file)]
        cmd += ["--k", str(k), "--mode", mode]
        loads.append(os.getloadavg()[0])
        p = run(cmd, work / "logs" / f"kh-search-{size}-{mode}{tag}-{r}.log", measure_rss=True)
        stats = last_json(p.stdout)
        if not p.ok or not stats:
            err(f"  ! no latency JSON on the last stdout line: {p.stdout[-200:]!r}")
            return {"ok": False}
        lat.append({key: float(stats[key]) for key in LATENCIES})
        if p.max_rss_kb:
            rss.append(p.max_rss_kb / 1024)
    res: dict = {"ok": True, "runs": lat, "load_1min": loads}
    for key in LATENCIES:
        res[key] = median([x[key] for x in lat])
    res["search_rss_mb"] = max(rss) if rss else None
    return res


def embedding_times(queries: Path) -> dict:
    """One query embedded at a time (as a search does), each distinct query once after a
    warm-up: hybrid's cost that does not grow with the index."""
    from engine.embedding import load_embedder  # only this measurement needs the model

    texts = list(dict.fromkeys(str(q["query"]) for q in load_queries(queries)))
    embedder = load_embedder()
    embedder.embed(texts[:3])
    times = []
    for text in texts:
        started = time.perf_counter()
        embedder.embed([text])
        times.append((time.perf_counter() - started) * 1000)
    times.sort()
    return {
        "n": len(times),
        "p50_ms": median(times),
        "p95_ms": times[min(len(times) - 1, int(0.95 * len(times)))],
        "load_1min": os.getloadavg()[0],
    }


def parse_baseline(p: Proc) -> dict:
    """Read a baseline's stdout: step count, load/build ms and its latency line(s)."""
    res: dict = {"ok": p.ok, "wall_s": p.wall_s}
    res["rss_mb"] = p.max_rss_kb / 1024 if p.max_rss_kb else None
    if m := re.search(r"(\d+) steps", p.stdout):
        res["steps"] = int(m.group(1))
    if m := _LOAD.search(p.stdout):
        res["load_s"] = int(m.group(1)) / 1000
    for line in p.stdout.splitlines():
        if m := _LAT.match(line):
            mode = "disk" if " disk " in m.group(1) else "memory"
            res[mode] = {"n": int(m.group(2)), "p50_ms": float(m.group(3))}
            res[mode] |= {"p95_ms": float(m.group(4)), "max_ms": float(m.group(5))}
    return res


def bench_baselines(root: Path, work: Path, size: int, queries: Path) -> dict:
    if missing := eval_kit_missing():
        err(f"[{size}] baselines skipped: {missing}")
        return {}
    res = {}
    for b in ("seed_spec03", "fts5_bm25"):
        err(f"[{size}] baseline {b}")
        cmd = [sys.executable, str(eval_dir() / "baselines" / f"{b}.py"), "--root", str(root)]
        cmd += ["--queries", str(queries), "--run", str(work / "runs" / f"speed-{size}-{b}.run")]
        res[b] = parse_baseline(run(cmd, work / "logs" / f"{b}-speed-{size}.log", True))
    return res


def knowhow_rows(build: dict, modes: dict[str, dict]) -> list[list[str]]:
    """One row per search mode; the build columns (one index for every mode) on the first."""
    rows = []
    for i, (mode, r) in enumerate(modes.items()):
        name = f"knowhow {mode}" + (" (default)" if mode == "hybrid" else "")
        if not r.get("ok") or r.get("p50_ms") is None:
            rows.append([name, "failed (see WORK/logs)", "", "", "", "", "", "", ""])
            continue
        row = [name, fmt(r["p50_ms"], 2), fmt(r["p95_ms"], 2), fmt(r["p99_ms"], 2)]
        row += [fmt(r["cpu_p50_ms"], 2)]
        if i == 0 and build.get("build_s") is not None:
            row += [
                f"{build['build_wall_s']:.1f} wall / {build['build_s']:.1f} engine"
                + f" (corpus read first: {build.get('corpus_read_s', 0):.1f})"
            ]
            row += [fmt(build["steps_per_s"], 0)]
        else:
            row += ["(same index)", ""]
        row += [fmt(r["search_rss_mb"], 0)]
        row += [fmt(build.get("index_mb"), 1) if i == 0 else ""]
        rows.append(row)
    return rows


def size_table(size: int, build: dict, modes: dict[str, dict], base: dict) -> str:
    hdr = ["system", "p50 ms", "p95 ms", "p99 ms", "CPU ms p50", "build/load s", "steps/s"]
    hdr += ["peak RSS MB"]
    rows = knowhow_rows(build, modes)
    for b, r in base.items():
        load, n = r.get("load_s"), r.get("steps")
        sps = n / load if n and load else None
        for mode, label in (("memory", "in-memory"), ("disk", "disk, as shipped")):
            if mode not in r:
                continue
            lat = r[mode]
            name = b if b == "fts5_bm25" else f"{b} ({label})"
            row = [name, fmt(lat["p50_ms"], 2), fmt(lat["p95_ms"], 2), f"(max {lat['max_ms']:.1f})"]
            row += ["—"]
            if mode == "memory":
                row += [fmt(load, 1), fmt(sps, 0), fmt(r["rss_mb"], 0), "in memory"]
            else:
                row += ["—", "—", "(same process)", "reads files"]
            rows.append(row)
    md = f"### {size:,} steps\n\n" + md_table([*hdr, "index MB"], rows)
    loads = [x for r in modes.values() for x in r.get("load_1min", [])]
    if loads:
        md += f"\nload average (1 min) before each knowhow search run: {min(loads):.1f}–"
        md += f"{max(loads):.1f} on {os.cpu_count()} CPUs\n"
    for mode, r in modes.items():
        ratios = []
        for b, rb in base.items():
            for where in ("memory", "disk"):
                if where in rb and r.get("p50_ms"):
                    ratios.append(f"{b} ({where}) {rb[where]['p50_ms'] / r['p50_ms']:.1f}×")
        if ratios:
            md += f"\nbaseline p50 ÷ knowhow {mode} p50, same run and queries (> 1: knowhow "
            md += "faster): " + "; ".join(ratios) + "\n"
    return md


TARGETS = (
    # (label, mode, size, key, limit, unit)
    ("keyword search p50 ≤ 5 ms", "keyword", 100_000, "p50_ms", 5.0, " ms"),
    ("keyword search p99 ≤ 30 ms", "keyword", 100_000, "p99_ms", 30.0, " ms"),
    ("keyword search p50 ≤ 25 ms", "keyword", 1_000_000, "p50_ms", 25.0, " ms"),
    ("keyword searching RSS ≤ 300 MB", "keyword", 1_000_000, "search_rss_mb", 300.0, " MB"),
    ("hybrid search p50 ≤ 10 ms", "hybrid", 100_000, "p50_ms", 10.0, " ms"),
    ("hybrid search p95 ≤ 25 ms", "hybrid", 100_000, "p95_ms", 25.0, " ms"),
    ("hybrid search p50 ≤ 40 ms", "hybrid", 1_000_000, "p50_ms", 40.0, " ms"),
    ("hybrid searching RSS ≤ 400 MB", "hybrid", 1_000_000, "search_rss_mb", 400.0, " MB"),
)


BUILD_TARGET_SIZES = (100_000, 1_000_000)
"""The sizes the build rate target is set for. At 10k the model's cost per distinct text
(~770 texts, ~5 CPU-s) is most of a build: its rate is shown, not judged."""


def targets(results: dict[int, dict]) -> list[list[str]]:
    """Target rows: (target, size, measured, PASS/FAIL); `not measured` when a size or mode
    was skipped."""
    rows = []
    for label, mode, size, key, limit, unit in TARGETS:
        v = results.get(size, {}).get("modes", {}).get(mode, {}).get(key)
        verdict = "not measured" if v is None else ("PASS" if v <= limit else "FAIL")
        rows.append([label, f"{size:,}", "—" if v is None else f"{v:.2f}{unit}", verdict])
    for size, r in results.items():
        v = r["build"].get("steps_per_s")
        verdict = "not measured" if v is None else ("PASS" if v >= 5000 else "FAIL")
        if size not in BUILD_TARGET_SIZES and v is not None:
            verdict = "not a target"
        rows.append(["build ≥ 5,000 steps/s", f"{size:,}", fmt(v, 0), verdict])
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--sizes", default="10000,100000,1000000")
    ap.add_argument(
        "--queries", type=int, default=200, help="public queries (or our dev set) cycled to N"
    )
    ap.add_argument(
        "--modes", default=",".join(MODES), help="search modes measured (keyword,hybrid,semantic)"
    )
    ap.add_argument("--work", type=Path, default=Path("bench-data"))
    ap.add_argument("--baselines-max-size", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=3, help="batch-search runs per size (median)")
    ap.add_argument(
        "--k", type=int, default=20, help="results per query (mm_knowledge_search default)"
    )
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args()
    work, mach = args.work.resolve(), machine()
    (work / "runs").mkdir(parents=True, exist_ok=True)  # the runs' files go here
    sizes = [int(s) for s in args.sizes.split(",") if s.strip()]
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    queries = make_queries(work, args.queries)
    different = make_different_queries(work)
    different_count = len(load_queries(different))
    results: dict[int, dict] = {}
    for size in sizes:
        root = ensure_corpus(work, size, SEED, workers=2)
        build = bench_build(root, work, size)
        searched = {
            mode: bench_search(root, work, size, queries, args.repeats, args.k, mode)
            for mode in (modes if build["ok"] else [])
        }
        for mode in [m for m in MODES if m in modes and build["ok"]]:
            searched[f"{mode}, {different_count} different queries first asked"] = bench_search(
                root, work, size, different, args.repeats, args.k, mode, "-different"
            )
        big = size > args.baselines_max_size
        base = {} if big else bench_baselines(root, work, size, queries)
        results[size] = {"build": build, "modes": searched, "baselines": base}
        out(size_table(size, build, searched, base))
    embedding = embedding_times(queries) if set(modes) - {"keyword"} else None
    if embedding:
        out(embedding_line(embedding))
    tgt = targets(results)
    tgt_md = md_table(["target", "size", "knowhow (median)", "PASS/FAIL"], tgt)
    out(tgt_md)
    meta = {"machine": mach, "args": vars(args) | {"work": str(work)}, "queries": str(queries)}
    write_json(
        work / "speed.json", meta | {"results": results, "embedding": embedding, "targets": tgt}
    )
    kh_ok = all(
        r["build"].get("ok") and all(m.get("ok") for m in r["modes"].values())
        for r in results.values()
    )
    if not kh_ok:
        err("knowhow failed at some size: docs/benchmarks.md left as it was")
    elif not args.no_write:
        body = (
            "## Speed — build, search latency, memory, index size\n\n"
            + machine_md(mach)
            + f"- queries: the {len(load_queries(public_queries()))} queries of "
            + f"`{public_queries().name}` cycled to {args.queries}, knowhow k={args.k} (the "
            + "default `limit` of mm_knowledge_search), baselines k=100; corpora "
            + f"`scripts/corpus/gen_corpus.py --seed {SEED}`; "
            + f"the rows `… first asked`: the {different_count} different queries of the public "
            + f"and dev sets, each asked once per run, {args.repeats} runs (a search keeps the "
            + "stored documents it read for the next ones, `engine/stored_docs.py`: repeating a "
            + "query would reuse them; agents repeating one get the search cache's answer "
            + "instead)\n"
            + "- knowhow: `reindex` into an empty dir, then `batch-search --mode M` "
            + f"{args.repeats}× per mode (loads the index, and in hybrid the model, once per run); "
            + "latencies are the **median over runs** of each run's percentile; peak RSS "
            + "(`/usr/bin/time -v`) is the highest over runs; `CPU ms p50` is the median search's "
            + "CPU time (all threads), which a busy machine inflates less than wall-clock time; "
            + "steps/s uses the engine-reported "
            + "build seconds (wall clock shown too)\n"
            + f"- baselines run only up to {args.baselines_max_size:,} steps: the SPEC-03 scan is "
            + "far too slow at 1M. They print p50/p95/max, not p99 (the p99 column shows max); "
            + "their load time includes reading every step file and their RSS the whole corpus\n"
            + "- **the machine is shared and noisy**: compare ratios measured in the same run, "
            + "not absolute numbers across runs\n\n"
            + "\n".join(
                size_table(s, r["build"], r["modes"], r["baselines"]) for s, r in results.items()
            )
            + (f"\n{embedding_line(embedding)}\n" if embedding else "")
            + "\n### Targets\n\n"
            + tgt_md
        )
        write_section("bench-speed", body)
    ok = all(r[3] in ("PASS", "not measured", "not a target") for r in tgt)
    return 0 if ok and kh_ok else 1


def embedding_line(e: dict) -> str:
    return (
        f"Query embedding alone (in process, one query at a time, the {e['n']} distinct queries, "
        f"load {e['load_1min']:.1f}): p50 {e['p50_ms']:.2f} ms, p95 {e['p95_ms']:.2f} ms — part "
        "of every hybrid search, whatever the index size.\n"
    )


if __name__ == "__main__":
    sys.exit(main())
