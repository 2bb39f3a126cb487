"""Search: one boosted Tantivy query over every session, then a rerank of the top window.

Retrieval runs one query over step and session fields of every session (no session cut, no
step cap), with the shared filters (`engine.filters`) as unscored MUST clauses. When the query
had more clauses than the posting budget allows, the retrieved candidates are rescored exactly
on all of them. The top window is then reranked in Python with what BM25 cannot express: how
many of the query's words a step covers, whether it worked, and how recent its session is.
Order is deterministic: score, then session createdAt (newest first), then stepId; every page
is a slice of that one ordering.
"""

from datetime import timedelta
from typing import Any

import tantivy

from analyzers import SynonymTable
from engine.clauses import doc_key, hit_count, unscored
from engine.documents import read_rank_record
from engine.evidence import match_evidence
from engine.filters import ReadView, epoch_ms_of, step_clauses
from engine.inputs import SearchInput
from engine.payload import read_payload
from engine.query import PlannedQuery, plan_query, scored_query
from engine.results import SearchPage
from engine.rows import step_row
from engine.salience import NO_RECALLS, lifted, recalls
from engine.sources import source_sessions
from engine.vocabulary import TypoVocabulary

RERANK_WINDOW = 100
COVERAGE_WEIGHT = 1.0
OK_FACTOR = 1.6
RECENCY_FACTORS = ((timedelta(hours=24), 1.2), (timedelta(hours=72), 1.07))


def search(
    view: ReadView, request: SearchInput, synonyms: SynonymTable, typos: TypoVocabulary
) -> SearchPage:
    searcher, schema = view.searcher, view.schema
    plan = plan_query(searcher, request.query, synonyms, typos)
    must = step_clauses(view, request)
    now_ms = epoch_ms_of(view.now)
    if request.minSalience > 0:
        must.append(_salient_steps(view, request.minSalience, now_ms))
    query = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, unscored(q)) for q in must]
        + [(tantivy.Occur.Must, scored_query(schema, plan.clauses))]
    )
    end = request.offset + request.limit
    found = searcher.search(query, limit=max(RERANK_WINDOW, end), count=True)
    head = found.hits[:RERANK_WINDOW]
    docs = {doc_key(address): searcher.doc(address) for _, address in head}
    scores = {doc_key(address): score for score, address in head}
    if len(plan.clauses) < len(plan.all_clauses):
        scores = _rescore(view, docs, plan)
    reranked, exact = [], []
    for key, doc in docs.items():
        created = int(doc["created"][0])
        ok, step_tokens, error_tokens = read_rank_record(doc["rank"][0])
        factor, covers_all = _rerank_factor(ok, step_tokens, error_tokens, plan, now_ms - created)
        reranked.append(scores[key] * factor)
        exact.append(covers_all)
    ids = [str(doc["step_id"][0]) for doc in docs.values()]
    window_recalls = recalls(searcher, schema, ids, now_ms)
    saliences = [window_recalls.get(step_id, NO_RECALLS).salience for step_id in ids]
    finals = lifted(reranked, exact, saliences)
    ranked = [
        (final, int(doc["created"][0]), step_id, doc)
        for final, step_id, doc in zip(finals, ids, docs.values(), strict=True)
    ]
    ranked.sort(key=lambda r: (-round(r[0], 9), -r[1], r[2]))
    # Past the reranked window, hits follow in BM25 order (never above the window: the
    # rerank factor is >= 1), so every page is a slice of one stable ordering.
    for score, address in found.hits[len(ranked) : end]:
        doc = searcher.doc(address)
        ranked.append((score, int(doc["created"][0]), str(doc["step_id"][0]), doc))
    page = ranked[request.offset : end]
    sessions = source_sessions(searcher, schema, {str(doc["session_id"][0]) for *_, doc in page})
    in_window = set(ids)
    beyond = [step_id for _, _, step_id, _ in page if step_id not in in_window]
    page_recalls = window_recalls | recalls(searcher, schema, beyond, now_ms)
    results = []
    for final, _, step_id, doc in page:
        payload = read_payload(doc)
        fields = match_evidence(payload, plan.tokens)
        session_id = str(doc["session_id"][0])
        results.append(
            step_row(
                step_id,
                session_id,
                payload,
                score=final,
                matched_fields=fields,
                session=sessions[session_id],
                recalls=page_recalls.get(step_id, NO_RECALLS),
            )
        )
    total = hit_count(found)
    return SearchPage(
        query=request.query,
        total=total,
        offset=request.offset,
        limit=request.limit,
        hasMore=request.offset + len(results) < total,
        results=results,
        hint=_empty_hint(searcher, request.query) if total == 0 else None,
    )


def _rescore(
    view: ReadView, docs: dict[tuple[int, int], Any], plan: PlannedQuery
) -> dict[tuple[int, int], float]:
    """Exact BM25 of every clause for the retrieved candidates only (cheap: an intersection
    with a small set), after retrieval ran on the clauses that fit the posting budget.
    Every candidate matches: its retrieval clauses are among all the clauses."""
    if not docs:
        return {}
    ids = [doc["step_id"][0] for doc in docs.values()]
    query = tantivy.Query.boolean_query(
        [
            (
                tantivy.Occur.Must,
                unscored(tantivy.Query.term_set_query(view.schema, "step_id", ids)),
            ),
            (tantivy.Occur.Must, scored_query(view.schema, plan.all_clauses)),
        ]
    )
    rescored = view.searcher.search(query, limit=len(ids), count=False)
    return {doc_key(address): score for score, address in rescored.hits}


def _empty_hint(searcher: tantivy.Searcher, query: str) -> str:
    """What an empty result can try instead: the flowTags and screens the index knows."""
    flows = sorted(t for t, _ in searcher.terms_with_prefix("flow_tag", "", None, 50))
    screens = sorted(
        t for t, _ in searcher.terms_with_prefix("screen_name", "", None, 50) if t != "unknown"
    )
    return (
        f"No steps match {query!r} with these filters. Known flowTags: "
        f"{', '.join(flows) or 'none'}; known screens: {', '.join(screens) or 'none'}."
    )


def _salient_steps(view: ReadView, min_salience: float, now_ms: int) -> tantivy.Query:
    """The steps at least `min_salience` salient now (a filter clause)."""
    salient = [
        step_id
        for step_id, found in recalls(view.searcher, view.schema, None, now_ms).items()
        if found.salience >= min_salience
    ]
    if not salient:
        return tantivy.Query.empty_query()
    return tantivy.Query.term_set_query(view.schema, "step_id", salient)


def _rerank_factor(
    ok: bool, step_tokens: list[str], error_tokens: list[str], plan: PlannedQuery, age_ms: int
) -> tuple[float, bool]:
    """Multiplier on BM25: query-word coverage, outcome and session recency; and whether the
    step is an exact match (it covers every concept of the query).

    A step that worked is preferred ("what worked last time"), unless the query is about this
    very failure: some query word is found in its error and nowhere else in the step.
    """
    other = plan.tokens.intersection(step_tokens)
    error = plan.tokens.intersection(error_tokens)
    matched = other | error
    covered = sum(1 for toks in plan.concept_tokens if toks & matched)
    coverage = covered / len(plan.concept_tokens) if plan.concept_tokens else 0.0
    about_failure = any(toks & error and not toks & other for toks in plan.concept_tokens)
    factor = 1 + COVERAGE_WEIGHT * coverage
    if ok or about_failure:
        factor *= OK_FACTOR
    return factor * _recency_factor(age_ms), covered == len(plan.concept_tokens) > 0


def _recency_factor(age_ms: int) -> float:
    for limit, factor in RECENCY_FACTORS:
        if 0 <= age_ms < limit.total_seconds() * 1000:
            return factor
    return 1.0
