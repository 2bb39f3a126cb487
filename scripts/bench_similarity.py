"""Similarity calibration: how close the shipped model puts relevant and unrelated query–step
pairs on the evaluation corpus, and what a floor on meaning-only hits keeps of each.

    .venv/bin/python scripts/bench_similarity.py [--steps 5000] [--seed 7] [--work bench-data]
        [--queries EXTRA.jsonl ...] [--nothing NOTHING.jsonl ...] [--no-write]

Why it exists: `minSimilarity` (the floor below which a step is no semantic hit) and the
confidence a result shows must mean the same on every query. A cosine is only comparable to
what this model gives texts that are, and are not, what a query asks for; this measures both on
the fixed corpus. The similarity is the one search ranks by: the query embedded as search
embeds it (with its glossary words), its cosine to each step's own text and to the screen it
observed, blended and weighted as the semantic leg does (`engine.meaning.semantic_leg`), for every
step of the corpus. A pair is relevant when the step does what the query asks and worked (qrels
grade 2), unrelated when the qrels do not name the step at all (grade 1, other steps of a session
of the query's flow, is left out of both). Nothing-matches query sets (`--nothing`: no step is
relevant) give the best similarity a query about nothing reaches.

Reads the index `bench_quality.py` builds (WORK/index-quality-<steps>-s<seed>; built here when
missing) and writes qrels the same way. The public and public paraphrase sets always run;
`--queries` adds judged sets. Never give it a blind set: it prints per-query numbers. Results
go to stdout, WORK/similarity.json and the bench-similarity section of docs/benchmarks.md.
"""

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
from bench_common import (
    ensure_corpus,
    err,
    eval_dir,
    fmt,
    knowhow_cmd,
    load_queries,
    machine,
    machine_md,
    md_table,
    out,
    private_copy,
    read_qrels,
    run,
    write_json,
    write_section,
)

from engine import KnowledgeEngine
from engine.meaning import KeyRows, SemanticLeg, query_embedding
from engine.query import step_filter

FLOORS = [round(0.10 + 0.05 * i, 2) for i in range(11)]
"""Floors whose effect the table shows (0.10 .. 0.60)."""
PERCENTILES = [5, 10, 25, 50, 75, 90, 95, 99]
NEAREST = 10
"""Each judged query's nearest steps whose relevance, by similarity band, calibrates what a
similarity says (`bands`)."""
BAND = 0.1
FINE_FLOORS = [round(0.05 + 0.01 * i, 2) for i in range(46)]
"""Floors (0.05 .. 0.50) searched for the balanced one (`balanced`)."""


def step_similarities(engine: KnowledgeEngine) -> tuple[list[str], Any]:
    """Every step's id, and a function from a query to its blended similarity to each step."""
    leg = engine.semantic()
    if not isinstance(leg, SemanticLeg):
        raise SystemExit(f"no semantic leg: {leg}")
    leg.vectors.refresh()  # its keys and rows are read on first use
    reader = engine.reader
    searcher = reader.searcher()
    query = step_filter(reader.schema)
    count = searcher.search(query, limit=1, count=True).count or 0
    addresses = [a for _, a in searcher.search(query, limit=max(count, 1)).hits]
    ids = [str(searcher.doc(a)["step_id"][0]) for a in addresses]
    rows = KeyRows.of(searcher, addresses, leg.vectors.numbered)

    def similarities(text: str) -> "np.ndarray[Any, Any]":
        asked = query_embedding(text, engine.synonyms)
        vector = leg.embedder.embed([asked.text])[0]
        return np.array(leg.similarities(vector, asked.observing).blend(rows))

    return ids, similarities


def percentiles(values: list[float]) -> list[float]:
    return [float(np.percentile(values, p)) for p in PERCENTILES] if values else []


def floor_table(
    relevant: list[float],
    unrelated: list[float],
    best_relevant: list[float],
    best_unrelated: list[float],
    nothing_best: list[float],
) -> list[dict[str, float]]:
    """What each floor keeps: shares of relevant and unrelated pairs at or above it, queries
    whose best relevant step is above it, and nothing-matches queries some step still reaches."""
    rel, unrel = np.array(relevant), np.array(unrelated)
    rows = []
    for floor in FLOORS:
        kept_rel, kept_unrel = float((rel >= floor).mean()), float((unrel >= floor).mean())
        rows.append(
            {
                "floor": floor,
                "relevant_kept": kept_rel,
                "unrelated_kept": kept_unrel,
                "queries_reaching": float(np.mean([b >= floor for b in best_relevant])),
                "queries_unrelated_reaching": float(np.mean([b >= floor for b in best_unrelated])),
                "nothing_reaching": float(np.mean([b >= floor for b in nothing_best]))
                if nothing_best
                else float("nan"),
            }
        )
    return rows


def balanced(pairs: list[tuple["np.ndarray[Any, Any]", "np.ndarray[Any, Any]"]]) -> dict[str, Any]:
    """The floor that best tells relevant steps from unrelated ones: the most relevant pairs
    kept for the fewest unrelated (Youden's J: share of relevant kept minus share of unrelated
    kept), over all pairs (pooled: the queries with hundreds of relevant steps weigh most) and
    averaged per query (each query weighs the same)."""
    relevant = np.concatenate([good for good, _ in pairs])
    unrelated = np.concatenate([other for _, other in pairs])
    pooled = {f: float((relevant >= f).mean() - (unrelated >= f).mean()) for f in FINE_FLOORS}
    per_query = {
        f: float(np.mean([(good >= f).mean() - (other >= f).mean() for good, other in pairs]))
        for f in FINE_FLOORS
    }
    return {
        "pooled": max(pooled, key=lambda f: pooled[f]),
        "pooled_j": max(pooled.values()),
        "per_query": max(per_query, key=lambda f: per_query[f]),
        "per_query_j": max(per_query.values()),
        "j_at": {f: (pooled[f], per_query[f]) for f in FINE_FLOORS},
    }


def bands(nearest: list[tuple[float, bool]]) -> list[dict[str, float]]:
    """Among each query's `NEAREST` steps: per similarity band, how many there are and the
    share that is relevant (what a similarity in that band says about a step search shows)."""
    rows = []
    for low in np.arange(0.0, 1.0, BAND):
        inside = [rel for sim, rel in nearest if low <= sim < low + BAND]
        if inside:
            rows.append(
                {"from": float(low), "steps": len(inside), "relevant": float(np.mean(inside))}
            )
    return rows


def report(result: dict[str, Any]) -> str:
    pct = [f"p{p}" for p in PERCENTILES]
    rows = [
        [name, str(len(values)), *(f"{v:.3f}" for v in percentiles(values))]
        for name, values in result["distributions"].items()
    ]
    md = "Blended similarity of query–step pairs (the score the semantic leg ranks by)\n\n"
    md += md_table(["pairs", "n", *pct], rows)
    md += "\nWhat a floor keeps (share of pairs at or above it; queries whose best step of the "
    md += "kind reaches it)\n\n"
    rows = [
        [
            f"{r['floor']:.2f}",
            f"{r['relevant_kept']:.3f}",
            f"{r['unrelated_kept']:.4f}",
            f"{r['queries_reaching']:.3f}",
            f"{r['queries_unrelated_reaching']:.3f}",
            f"{r['nothing_reaching']:.3f}",
        ]
        for r in result["floors"]
    ]
    headers = [
        "floor",
        "relevant pairs",
        "unrelated pairs",
        "queries: best relevant",
        "queries: best unrelated",
        "nothing-matches: best step",
    ]
    md += md_table(headers, rows)
    md += (
        f"\nAmong each judged query's {NEAREST} nearest steps: the share relevant by similarity\n\n"
    )
    rows = [
        [f"{b['from']:.1f}–{b['from'] + BAND:.1f}", str(b["steps"]), f"{b['relevant']:.2f}"]
        for b in result["bands"]
    ]
    md += md_table(["similarity", "steps", "relevant"], rows)
    b = result["balanced"]
    md += "\nThe balanced floor (most relevant pairs kept for the fewest unrelated, Youden's J): "
    md += f"{b['pooled']:.2f} over all pairs (J {b['pooled_j']:.3f}), {b['per_query']:.2f} "
    md += f"averaged per query (J {b['per_query_j']:.3f}); at 0.20: J "
    md += f"{b['j_at'][0.2][0]:.3f} / {b['j_at'][0.2][1]:.3f}\n"
    md += "\nPer set: median over queries of the best relevant and the best unrelated step\n\n"
    rows = [
        [name, str(v["queries"]), fmt(v["best_relevant_median"]), fmt(v["best_unrelated_median"])]
        for name, v in result["sets"].items()
    ]
    md += md_table(["set", "queries", "best relevant", "best unrelated"], rows)
    return md


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("bench-data"))
    ap.add_argument("--queries", type=Path, action="append", help="extra judged sets (JSONL)")
    ap.add_argument("--nothing", type=Path, action="append", help="nothing-matches sets (JSONL)")
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    args = ap.parse_args()
    ev, work = eval_dir(), args.work.resolve()
    corpus = ensure_corpus(work, args.steps, args.seed).parents[1]
    tag = f"{args.steps}-s{args.seed}"
    index = work / f"index-quality-{tag}"
    root = work / f"quality-{tag}" / "test-artifacts" / "llm-knowledge"
    if not (index / "CURRENT").exists() or not root.is_dir():
        root = private_copy(corpus, work / f"quality-{tag}")
        cmd = [*knowhow_cmd(), "reindex", "--root", str(root), "--index", str(index), "--json"]
        if not run(cmd, work / "logs" / "kh-similarity.log").ok:
            raise SystemExit("knowhow reindex failed")
    engine = KnowledgeEngine(root, index, cache_searches=False)
    ids, similarities = step_similarities(engine)
    position = {step_id: i for i, step_id in enumerate(ids)}

    relevant: list[float] = []
    unrelated: list[float] = []
    best_relevant: list[float] = []
    best_unrelated: list[float] = []
    nearest: list[tuple[float, bool]] = []
    separated: list[tuple[Any, Any]] = []
    sets: dict[str, dict[str, Any]] = {}
    judged = [ev / "queries_public.jsonl", ev / "queries_paraphrase_public.jsonl"]
    for qfile in dict.fromkeys(p.resolve() for p in [*judged, *(args.queries or [])]):
        qrels_path = work / f"qrels-{qfile.stem}-{tag}.txt"
        cmd = [sys.executable, str(ev / "make_qrels.py"), "--truth", str(corpus / "truth.jsonl")]
        cmd += ["--queries", str(qfile), "--out", str(qrels_path)]
        if not run(cmd, work / "logs" / "qrels-similarity.log").ok:
            raise SystemExit(f"make_qrels.py failed on {qfile}")
        qrels = read_qrels(qrels_path)
        err(f"[{qfile.stem}] {len(qrels)} judged queries")
        per_set: list[tuple[float, float]] = []
        for item in load_queries(qfile):
            rels = qrels.get(str(item["qid"]), {})
            good = [position[d] for d, g in rels.items() if g >= 2 and d in position]
            if not good:
                continue
            sims = similarities(str(item["query"]))
            mask = np.ones(len(ids), bool)
            mask[[position[d] for d in rels if d in position]] = False
            relevant += sims[good].tolist()
            unrelated += sims[mask].tolist()
            separated.append((sims[good], sims[mask]))
            per_set.append((float(sims[good].max()), float(sims[mask].max())))
            good_set = set(good)
            nearest += [(float(sims[i]), int(i) in good_set) for i in np.argsort(-sims)[:NEAREST]]
        best_relevant += [r for r, _ in per_set]
        best_unrelated += [u for _, u in per_set]
        sets[qfile.stem] = {
            "queries": len(per_set),
            "best_relevant_median": float(np.median([r for r, _ in per_set])),
            "best_unrelated_median": float(np.median([u for _, u in per_set])),
        }
    nothing_best: list[float] = []
    for qfile in args.nothing or []:
        best = [float(similarities(str(q["query"])).max()) for q in load_queries(qfile)]
        nothing_best += best
        sets[qfile.stem] = {
            "queries": len(best),
            "best_relevant_median": float("nan"),
            "best_unrelated_median": float(np.median(best)),
        }
    result: dict[str, Any] = {
        "machine": machine(),
        "steps": args.steps,
        "seed": args.seed,
        "distributions": {
            "relevant": relevant,
            "unrelated": unrelated,
            "best relevant per query": best_relevant,
            "best unrelated per query": best_unrelated,
            "nothing-matches: best step": nothing_best,
        },
        "sets": sets,
        "bands": bands(nearest),
        "balanced": balanced(separated),
        "floors": floor_table(relevant, unrelated, best_relevant, best_unrelated, nothing_best),
    }
    md = report(result)
    out(md)
    summary = {k: percentiles(v) for k, v in result["distributions"].items()}
    write_json(work / "similarity.json", result | {"distributions": summary})
    if not args.no_write:
        body = (
            f"## Similarity calibration ({args.steps:,} steps, seed {args.seed})\n\n"
            + machine_md(result["machine"])
            + "\n"
            + md
        )
        write_section("bench-similarity", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
