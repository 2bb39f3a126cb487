"""Quality benchmark: knowhow vs the three baselines on the fixed evaluation corpus.

    .venv/bin/python scripts/bench_quality.py [--steps 5000] [--seed 7] [--work bench-data]
        [--k 100] [--queries EXTRA.jsonl ...] [--no-write]

Why it exists: "is search better?" must be answered with the same corpus, queries and scorer every
time. It generates the fixed corpus (gen_corpus.py), derives graded qrels (make_qrels.py), runs
seed_substring / seed_spec03 / fts5_bm25 and knowhow (`reindex` then `batch-search`), and scores
every run twice: with the eval's score.py, and with the pure-Python measures below, so the numbers
never depend on ir-measures being installed; the two must agree within 0.001. Results go to stdout,
to WORK/quality.json and to the bench-quality section of docs/benchmarks.md.
The public query set, the public paraphrase set and the public outside-voice agent sentences (all
from the eval folder; the last where the kit has it) always run; `--queries` adds more (`make
bench-quality` adds our dev, dev paraphrase, held-out paraphrase, agent-sentence dev,
outside-voice and blind sets, and the nothing-matches and bad-input sets). A set where no query
has a relevant step (nothing-matches, bad input) has no nDCG: it reports, per run, how many of its
queries were answered with results. Every other set prints its targets as PASS/FAIL lines:
- a set of queries in the corpus's words (public, dev): overall nDCG@10 >= best baseline + 0.15,
  and on every query kind >= the best baseline;
- a paraphrase set (every query of kind `paraphrase`): hybrid nDCG@10 >= 0.40 (the bar for
  the public paraphrases, applied to every paraphrase set: unseen sets are checked the same way);
- every set: hybrid within 0.01 of keyword on every query kind.
Every set also reports how many of its queries knowhow's answer flags (its coverage names a concept
of the query that no step holds, or it is empty): target at least 14 of 16 on a nothing-matches
set (kind `nothing`), at most 10 % on each of the kit's sets.
The renames of the eval vocabulary (`vocab.json` "renames": a new testId and the old one it
replaced) are searched by their old testId in each knowhow mode: a rename passes when a step that
worked with its new testId is in the first 3 results (target: all of them).
knowhow runs in each search mode (`knowhow` = hybrid, the default; `knowhow-keyword`,
`knowhow-semantic`).
"""

import argparse
import json
import math
import sys
from pathlib import Path

from bench_common import (
    EVAL_KIT,
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
    mean,
    out,
    private_copy,
    read_qrels,
    read_run,
    run,
    write_json,
    write_section,
)

BASELINES = ["seed_substring", "seed_spec03", "fts5_bm25"]
MODES = ["hybrid", "keyword", "semantic"]
"""knowhow runs once per search mode: `knowhow` (hybrid, the default), `knowhow-keyword`, …"""
HYBRID_TOLERANCE = 0.01
"""Hybrid may fall below keyword on a query kind by at most this much."""
MEASURES = ["nDCG@10", "MRR@10", "R@20"]
FLAGGED_NOTHING_AT_LEAST = 14 / 16
"""Share of a nothing-matches set's queries whose answer must say that something is missing."""
FLAGGED_PUBLIC_AT_MOST = 0.10
"""Share of the queries of each of the kit's sets whose answer may say so (they are about what was
recorded)."""
RENAME_DEPTH = 3
"""A rename passes when a working step with its new testId is among this many first results."""
KNOWHOW_RUNS = ["knowhow", "knowhow-keyword", "knowhow-semantic"]
OVERALL_MARGIN = 0.15
PARAPHRASE_TARGET = 0.40
"""Hybrid nDCG@10 every paraphrase set must reach (the public paraphrases' target)."""
TOLERANCE = 0.001
KIT_SETS = ["queries_public.jsonl", "queries_paraphrase_public.jsonl", "queries_agent_public.jsonl"]
"""The kit's query sets, always run; the outside-voice agent sentences only where the kit has them
(the kit's older versions do not)."""


def per_query(qrels: dict[str, dict[str, int]], ranked: dict[str, list[str]]) -> dict:
    """nDCG@10 (gain = grade, log2 discount, ideal from qrels), MRR@10, R@20 for every judged query.

    trec_eval conventions, as score.py: a query the run does not answer scores 0; grade >= 1 is
    relevant for MRR and recall.
    """
    res: dict[str, dict[str, float]] = {}
    for qid, rels in qrels.items():
        gains = [rels.get(d, 0) for d in ranked.get(qid, [])]
        dcg = sum(g / math.log2(i + 2) for i, g in enumerate(gains[:10]) if g > 0)
        ideal = sorted((g for g in rels.values() if g > 0), reverse=True)[:10]
        idcg = sum(g / math.log2(i + 2) for i, g in enumerate(ideal))
        n_rel = sum(1 for g in rels.values() if g > 0)
        rr = next((1.0 / (i + 1) for i, g in enumerate(gains[:10]) if g >= 1), 0.0)
        res[qid] = {
            "nDCG@10": dcg / idcg if idcg else 0.0,
            "MRR@10": rr,
            "R@20": sum(1 for g in gains[:20] if g >= 1) / n_rel if n_rel else 0.0,
        }
    return res


def summarize(pq: dict[str, dict[str, float]], kinds: dict[str, str]) -> dict:
    kind_list = sorted({kinds[q] for q in pq if q in kinds})
    return {
        "overall": {m: mean([v[m] for v in pq.values()]) for m in MEASURES},
        "kinds": {
            k: {m: mean([v[m] for q, v in pq.items() if kinds.get(q) == k]) for m in MEASURES}
            for k in kind_list
        },
        "per_query_ndcg10": {q: round(v["nDCG@10"], 6) for q, v in sorted(pq.items())},
    }


def parse_score_md(text: str) -> dict[str, dict[str, float]]:
    """score.py --markdown prints tables (overall, then per kind): run -> column -> value."""
    parsed: dict[str, dict[str, float]] = {}
    header: list[str] | None = None
    for line in text.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = cells
        elif not set("".join(cells)) <= {"-"}:
            row = parsed.setdefault(cells[0], {})
            row.update({h: float(c) for h, c in zip(header[1:], cells[1:], strict=False)})
    return parsed


def cross_check(name: str, mine: dict, theirs: dict[str, float]) -> list[str]:
    flat = dict(mine["overall"]) | {k: v["nDCG@10"] for k, v in mine["kinds"].items()}
    bad = [
        f"{name} {col}: mine {flat[col]:.4f} vs score.py {val:.3f}"
        for col, val in theirs.items()
        if col in flat and abs(flat[col] - val) > TOLERANCE
    ]
    for b in bad:
        err(f"WARNING: scores differ by > {TOLERANCE}: {b}")
    return bad


def targets(scores: dict[str, dict], paraphrase: bool) -> dict:
    """A paraphrase set: hybrid nDCG@10 >= PARAPHRASE_TARGET. Any other: knowhow minus the best
    baseline, overall (+0.15 needed) and per kind (>= 0 needed)."""
    base = [scores[b] for b in BASELINES if b in scores]
    kh = scores.get("knowhow")
    if kh is None or not base:
        return {}
    if paraphrase:
        value = kh["overall"]["nDCG@10"]
        return {"paraphrase": value, "paraphrase_pass": value >= PARAPHRASE_TARGET - 1e-9}
    best = max(b["overall"]["nDCG@10"] for b in base)
    kinds = {k: max(b["kinds"][k]["nDCG@10"] for b in base) for k in kh["kinds"]}
    deltas = {k: kh["kinds"][k]["nDCG@10"] - v for k, v in kinds.items()}
    delta = kh["overall"]["nDCG@10"] - best
    return {
        "best_baseline_overall": best,
        "delta_overall": delta,
        "overall_pass": delta >= OVERALL_MARGIN - 1e-9,
        "delta_kinds": deltas,
        "kinds_failing": [k for k, d in deltas.items() if d < -1e-9],
    }


def hybrid_deltas(scores: dict[str, dict]) -> dict[str, float] | None:
    """Hybrid minus keyword nDCG@10 per query kind (None: one of them did not run)."""
    if "knowhow" not in scores or "knowhow-keyword" not in scores:
        return None
    hy, kw = scores["knowhow"]["kinds"], scores["knowhow-keyword"]["kinds"]
    return {k: hy[k]["nDCG@10"] - kw[k]["nDCG@10"] for k in sorted(hy) if k in kw}


def hybrid_pass(deltas: dict[str, float] | None) -> bool:
    return deltas is not None and min(deltas.values(), default=0.0) >= -HYBRID_TOLERANCE - 1e-9


def set_pass(tgt: dict, scores: dict[str, dict]) -> bool:
    """Every target of one query set holds."""
    if not tgt or not hybrid_pass(hybrid_deltas(scores)):
        return False
    if "paraphrase" in tgt:
        return bool(tgt["paraphrase_pass"])
    return bool(tgt["overall_pass"]) and not tgt["kinds_failing"]


def answered(runs: dict[str, Path], qids: list[str]) -> dict[str, dict[str, float]]:
    """Per run: how many queries got at least one result, and the mean number of results.

    A set whose queries have no relevant step (nothing-matches, bad input) has no nDCG: what
    matters there is whether search answers with results at all (k caps the count).
    """
    res: dict[str, dict[str, float]] = {}
    for name, path in runs.items():
        ranked = read_run(path)
        counts = [float(len(ranked.get(q, []))) for q in qids]
        res[name] = {"answered": sum(1 for c in counts if c), "mean_results": mean(counts)}
    return res


def answered_report(qset: str, stats: dict[str, dict[str, float]], n_queries: int) -> str:
    rows = [
        [n, f"{int(v['answered'])} of {n_queries}", f"{v['mean_results']:.1f}"]
        for n, v in stats.items()
    ]
    md = f"**{qset}** — no query has a relevant step: queries answered with results\n\n"
    return md + md_table(["run", "answered", "mean results"], rows)


def flagged(path: Path) -> tuple[int, int]:
    """(answers flagged, answers) of a `batch-search --coverage` file: an answer is flagged when
    its coverage names a concept no step holds, or it is empty."""
    answers = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    return sum(1 for a in answers if a.get("uncovered") or not a["total"]), len(answers)


def flag_report(qset: str, counts: dict[str, tuple[int, int]], kinds: set[str]) -> tuple[str, bool]:
    """A line on the answers each knowhow run flagged, and whether the set's target (if any)
    holds for hybrid."""
    said = "; ".join(f"{n} {k} of {total}" for n, (k, total) in counts.items())
    md = f"- answers flagged as missing a concept of the query: {said}"
    k, total = counts.get("knowhow", (0, 0))
    if kinds == {"nothing"}:
        ok = total > 0 and k >= FLAGGED_NOTHING_AT_LEAST * total - 1e-9
        md += f"; target hybrid >= {FLAGGED_NOTHING_AT_LEAST:.0%}: **{'PASS' if ok else 'FAIL'}**"
        return md + "\n", ok
    if f"{qset}.jsonl" in KIT_SETS:
        ok = k <= FLAGGED_PUBLIC_AT_MOST * total + 1e-9
        md += f"; target hybrid <= {FLAGGED_PUBLIC_AT_MOST:.0%}: **{'PASS' if ok else 'FAIL'}**"
        return md + "\n", ok
    return md + "\n", True


def rename_queries(ev: Path, path: Path) -> list[tuple[str, str, str]]:
    """Write the old testIds of the eval vocabulary's renames as a query file; returns
    (qid, old testId, new testId) per rename (one old id may have several successors)."""
    renames = json.loads((ev / "vocab.json").read_text(encoding="utf-8"))["renames"]
    olds = list(dict.fromkeys(old for old, _ in renames.values()))
    qid = {old: f"RN{i + 1:02d}" for i, old in enumerate(olds)}
    lines = [json.dumps({"qid": qid[old], "query": old, "kind": "rename"}) for old in olds]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return [(qid[old], old, new) for new, (old, _) in renames.items()]


def step_facts(root: Path) -> dict[str, tuple[bool, str | None, set[str]]]:
    """Per step id: whether it worked, the testId it acted on (a `[data-testid=…]` selector
    counts) and the testIds its observation shows."""
    facts = {}
    for path in root.glob("*/steps/*.json"):
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        target = (record.get("tool") or {}).get("target") or {}
        acted = target.get("testId")
        selector = str(target.get("selector") or "")
        if not acted and selector.startswith("[data-testid="):
            acted = selector.split("=", 1)[1].strip("]\"' ")
        shown = {
            str(t.get("testId")) for t in (record.get("observation") or {}).get("testIds") or []
        }
        ok = bool((record.get("outcome") or {}).get("ok"))
        facts[f"{path.parts[-3]}/{path.stem}"] = (ok, acted, shown)
    return facts


def rename_ranks(
    renames: list[tuple[str, str, str]],
    ranked: dict[str, list[str]],
    facts: dict[str, tuple[bool, str | None, set[str]]],
) -> list[int | None]:
    """Per rename, the rank of the first result that worked with the new testId (None: not in
    the results): acting on it, or, for a testId no step ever acts on (a balance shown on the
    home screen), showing it."""
    acted_on = {acted for _, acted, _ in facts.values() if acted}

    def works(step_id: str, new: str) -> bool:
        ok, acted, shown = facts.get(step_id, (False, None, set()))
        return ok and (acted == new if new in acted_on else new in shown)

    return [
        next((i + 1 for i, d in enumerate(ranked.get(qid, [])) if works(d, new)), None)
        for qid, _, new in renames
    ]


def renames_report(renames: list[tuple[str, str, str]], ranks: dict[str, list[int | None]]) -> str:
    names = list(ranks)
    passed = {n: sum(1 for r in ranks[n] if r is not None and r <= RENAME_DEPTH) for n in names}
    md = "**renames** — old testId searched: a step that worked with the new one in the first "
    md += f"{RENAME_DEPTH} results\n\n"
    rows = [[n, f"{passed[n]} of {len(renames)}"] for n in names]
    md += md_table(["run", f"in top {RENAME_DEPTH}"], rows)
    rows = [
        [f"`{old}` → `{new}`", *("—" if ranks[n][i] is None else str(ranks[n][i]) for n in names)]
        for i, (_, old, new) in enumerate(renames)
    ]
    md += "\nRank of the first working step with the new testId (— : not in the first 100)\n\n"
    md += md_table(["rename", *names], rows)
    ok = "PASS" if passed.get("knowhow") == len(renames) else "FAIL"
    md += f"\n- target every rename in the first {RENAME_DEPTH} (hybrid): **{ok}**\n"
    return md


def report(qset: str, scores: dict[str, dict], tgt: dict, mismatches: list[str]) -> str:
    names = [n for n in [*BASELINES, *KNOWHOW_RUNS] if n in scores]
    kinds = sorted({k for n in names for k in scores[n]["kinds"]})
    rows = [[n] + [fmt(scores[n]["overall"][m]) for m in MEASURES] for n in names]
    md = f"**{qset}** — overall\n\n" + md_table(["run", *MEASURES], rows)
    rows = [[n] + [fmt(scores[n]["kinds"][k]["nDCG@10"]) for k in kinds] for n in names]
    md += "\nnDCG@10 per query kind\n\n" + md_table(["run", *kinds], rows)
    if tgt and "paraphrase" in tgt:
        ok = "PASS" if tgt["paraphrase_pass"] else "FAIL"
        md += f"\n- target hybrid nDCG@10 >= {PARAPHRASE_TARGET:.2f} (paraphrase set): **{ok}**"
        md += f" ({tgt['paraphrase']:.3f})\n"
    elif tgt:
        per_kind = ", ".join(f"{k} {d:+.3f}" for k, d in tgt["delta_kinds"].items())
        md += f"\nknowhow − best baseline: overall {tgt['delta_overall']:+.3f}; {per_kind}\n\n"
        ok = "PASS" if tgt["overall_pass"] else "FAIL"
        md += f"- target overall nDCG@10 >= best baseline + {OVERALL_MARGIN}: **{ok}**\n"
        fails = ", ".join(tgt["kinds_failing"]) or "none"
        ok = "FAIL" if tgt["kinds_failing"] else "PASS"
        md += f"- target every kind >= best baseline on that kind: **{ok}** (below: {fails})\n"
    else:
        md += "\nknowhow: no run (see the log under WORK/logs); targets not evaluated\n"
    deltas = hybrid_deltas(scores)
    if deltas is not None:
        below = [f"{k} {d:+.3f}" for k, d in deltas.items()]
        ok = "PASS" if hybrid_pass(deltas) else "FAIL"
        md += f"- hybrid − keyword per kind: {', '.join(below)}; "
        md += f"target every kind >= keyword − {HYBRID_TOLERANCE}: **{ok}**\n"
    md += f"- score.py cross-check (±{TOLERANCE}): "
    md += ("; ".join(mismatches) if mismatches else "agrees") + "\n"
    return md


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--steps", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--work", type=Path, default=Path("bench-data"))
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--queries", type=Path, action="append", help="extra query sets (JSONL)")
    ap.add_argument("--no-write", action="store_true", help="do not update docs/benchmarks.md")
    ap.add_argument(
        "--reuse-baselines",
        action="store_true",
        help="score the baselines' run files an earlier run left in WORK instead of running them "
        "again (they depend only on the corpus and the queries)",
    )
    ap.add_argument(
        "--min-similarity", type=float, help="knowhow's minSimilarity (default: the engine's)"
    )
    args = ap.parse_args()
    missing = eval_kit_missing()
    if missing:
        out(
            f"bench-quality skipped: {missing}. It scores knowhow and the baselines against the "
            f"kit's queries and graded relevance; set KNOWHOW_EVAL_DIR to a folder holding "
            f"{', '.join(EVAL_KIT)} and baselines/."
        )
        return 0
    ev, work, mach = eval_dir(), args.work.resolve(), machine()
    corpus = ensure_corpus(work, args.steps, args.seed).parents[1]
    truth = corpus / "truth.jsonl"
    tag = f"{args.steps}-s{args.seed}"
    root = private_copy(corpus, work / f"quality-{tag}")  # every run indexes the same files
    logs = work / "logs"
    index = work / f"index-quality-{tag}"

    err("knowhow reindex")
    kh = knowhow_cmd()
    p = run([*kh, "reindex", "--root", str(root), "--index", str(index), "--json"], logs / "kh.log")
    kh_ok = p.ok
    result: dict = {"machine": mach, "steps": args.steps, "seed": args.seed, "k": args.k}
    result["knowhow_reindex"] = {"ok": p.ok, "wall_s": p.wall_s, "json": last_json(p.stdout)}

    sections, all_pass = [], kh_ok
    floor = args.min_similarity
    similarity_floor = ["--min-similarity", str(floor)] if floor is not None else []
    sets = [ev / name for name in KIT_SETS if (ev / name).exists()]
    for qfile in dict.fromkeys(path.resolve() for path in [*sets, *(args.queries or [])]):
        qset = qfile.stem
        kinds = {str(q["qid"]): str(q["kind"]) for q in load_queries(qfile)}
        qrels_path = work / f"qrels-{qset}-{tag}.txt"
        cmd = [sys.executable, str(ev / "make_qrels.py"), "--truth", str(truth)]
        p = run([*cmd, "--queries", str(qfile), "--out", str(qrels_path)], logs / "qrels.log")
        if not p.ok:
            raise SystemExit(f"make_qrels.py failed on {qfile}")
        qrels = read_qrels(qrels_path)
        rundir = work / "runs" / f"{qset}-{tag}"
        rundir.mkdir(parents=True, exist_ok=True)
        runs: dict[str, Path] = {}
        flags: dict[str, tuple[int, int]] = {}
        for b in BASELINES:
            if args.reuse_baselines and (rundir / f"{b}.run").exists():
                runs[b] = rundir / f"{b}.run"
                continue
            err(f"[{qset}] baseline {b}")
            cmd = [sys.executable, str(ev / "baselines" / f"{b}.py"), "--root", str(root)]
            cmd += ["--queries", str(qfile), "--run", str(rundir / f"{b}.run"), "--k", str(args.k)]
            cmd += ["--disk-queries", "0"] if b != "fts5_bm25" else []
            if run(cmd, logs / f"{b}-{qset}.log").ok:
                runs[b] = rundir / f"{b}.run"
        for mode in MODES if kh_ok else ():
            name = "knowhow" if mode == "hybrid" else f"knowhow-{mode}"
            err(f"[{qset}] knowhow batch-search --mode {mode}")
            cmd = [*kh, "batch-search", "--root", str(root), "--index", str(index)]
            cmd += ["--queries", str(qfile), "--run", str(rundir / f"{name}.run")]
            cmd += ["--mode", mode, *similarity_floor]
            cmd += ["--coverage", str(rundir / f"{name}.coverage.jsonl")]
            p = run([*cmd, "--k", str(args.k)], logs / f"{name}-{qset}.log")
            if p.ok:
                runs[name] = rundir / f"{name}.run"
                flags[name] = flagged(rundir / f"{name}.coverage.jsonl")
            result.setdefault("knowhow_latency", {}).setdefault(qset, {})[mode] = last_json(
                p.stdout
            )
        flag_md, flags_pass = flag_report(qset, flags, set(kinds.values()))
        all_pass &= flags_pass
        if not qrels:
            stats = answered(runs, list(kinds))
            md = answered_report(qset, stats, len(kinds)) + "\n" + flag_md
            sections.append(md)
            out(md)
            result.setdefault("query_sets", {})[qset] = {
                "queries": str(qfile),
                "answered": stats,
                "flagged": flags,
            }
            continue
        scores = {n: summarize(per_query(qrels, read_run(path)), kinds) for n, path in runs.items()}
        cmd = [sys.executable, str(ev / "score.py"), "--qrels", str(qrels_path)]
        cmd += ["--queries", str(qfile), "--markdown"]
        cmd += [x for path in runs.values() for x in ("--run", str(path))]
        p = run(cmd, logs / f"score-{qset}.log")
        score_py = parse_score_md(p.stdout) if p.ok else {}
        mismatches = [
            x for n in scores if n in score_py for x in cross_check(n, scores[n], score_py[n])
        ]
        if not score_py:
            mismatches.append("score.py did not run")
        paraphrase = set(kinds.values()) == {"paraphrase"}
        tgt = targets(scores, paraphrase)
        all_pass &= set_pass(tgt, scores)
        n_q = len(qrels)
        md = report(f"{qset} ({n_q} judged queries)", scores, tgt, mismatches) + flag_md
        sections.append(md)
        out(md)
        result.setdefault("query_sets", {})[qset] = {
            "queries": str(qfile),
            "qrels": str(qrels_path),
            "scores": scores,
            "score_py": score_py,
            "mismatches": mismatches,
            "targets": tgt,
            "flagged": flags,
        }

    if kh_ok:
        renames = rename_queries(ev, work / "queries-renames.jsonl")
        facts = step_facts(root)
        ranks: dict[str, list[int | None]] = {}
        for mode in MODES:
            name = "knowhow" if mode == "hybrid" else f"knowhow-{mode}"
            err(f"[renames] knowhow batch-search --mode {mode}")
            path = work / "runs" / f"renames-{tag}" / f"{name}.run"
            path.parent.mkdir(parents=True, exist_ok=True)
            cmd = [*kh, "batch-search", "--root", str(root), "--index", str(index)]
            cmd += ["--queries", str(work / "queries-renames.jsonl"), "--run", str(path)]
            cmd += similarity_floor
            if run([*cmd, "--mode", mode, "--k", str(args.k)], logs / f"{name}-renames.log").ok:
                ranks[name] = rename_ranks(renames, read_run(path), facts)
        md = renames_report(renames, ranks)
        sections.append(md)
        out(md)
        all_pass &= all(r is not None and r <= RENAME_DEPTH for r in ranks.get("knowhow", [None]))
        result["renames"] = {
            n: {f"{old} -> {new}": r for (_, old, new), r in zip(renames, v, strict=True)}
            for n, v in ranks.items()
        }
    write_json(work / "quality.json", result)
    if not all(
        "knowhow" in qs.get("scores", qs.get("answered")) for qs in result["query_sets"].values()
    ):
        err("knowhow did not run: docs/benchmarks.md left as it was")
    elif not args.no_write:
        index_line = f"knowhow reindex: {result['knowhow_reindex']['wall_s']:.1f} s wall"
        body = (
            f"## Quality — nDCG@10 vs the baselines ({args.steps:,} steps, seed {args.seed})\n\n"
            + machine_md(mach)
            + f"- corpus: `gen_corpus.py --steps {args.steps} --seed {args.seed}`; "
            + f"k={args.k}; {index_line}"
            + (f"; minSimilarity {floor}" if floor is not None else "")
            + "\n"
            + "- measures: pure-Python nDCG@10 (gain = grade), MRR@10, R@20 over every judged "
            + "query, cross-checked against `score.py`\n\n"
            + "\n".join(sections)
        )
        write_section("bench-quality", body)
    return 0 if all_pass else 1


if __name__ == "__main__":
    sys.exit(main())
