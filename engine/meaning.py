"""The semantic leg joined to the keyword results: the mode a search is answered in, the
semantic candidates fused with the keyword rerank window (`engine.hybrid.fuse`), and why a
semantic-only hit matched. Exact matches (the keyword leg's first tier) stay first.
"""

from typing import Any

import tantivy

from engine.clauses import doc_key, one_of
from engine.filters import ReadView
from engine.hybrid import RERANK_WINDOW, Hit, fuse, semantic_weight
from engine.inputs import SearchInput
from engine.query import PlannedQuery, scored_query
from engine.semantic import DEFAULT_MIN_SIMILARITY, SemanticLeg, embeddable, semantic_candidates


def meaning_fields(hit: Hit) -> list[str]:
    """Why a semantic-only hit matched: no query word, its meaning (every result says why)."""
    return [f"meaning:similarity {hit.similarity or 0.0:.2f}"]


def answer_mode(request: SearchInput, semantic: SemanticLeg | str) -> tuple[str, str | None]:
    """The mode a request is answered in, and why it is not the one asked for (None: it is)."""
    if request.mode == "keyword":
        return "keyword", None
    if isinstance(semantic, str):
        return "keyword", semantic
    if not embeddable(request.query):
        return "keyword", None  # nothing to embed: the keywords are all there is
    return request.mode, None


def with_meaning(
    view: ReadView,
    request: SearchInput,
    plan: PlannedQuery,
    must: list[tantivy.Query],
    ranked: list[Hit],
    total: int,
    semantic: SemanticLeg,
) -> tuple[list[Hit], int]:
    """Hybrid or semantic: the semantic candidates (and, in hybrid, the keyword rerank window)
    fused; in hybrid the keyword hits past the window follow. Exact matches (the keyword leg's
    first tier) stay first. `total` counts every keyword match plus the semantic hits that
    match no keyword."""
    sims = semantic.similarities(request.query)
    min_similarity = (
        request.minSimilarity if request.minSimilarity is not None else DEFAULT_MIN_SIMILARITY
    )
    fetched = {hit.key: hit.doc for hit in ranked}
    found = semantic_candidates(view, must, sims, min_similarity, fetched)
    matching = _keyword_matches(view, plan, found, ranked)
    exact_keys = {hit.key for hit in ranked if hit.exact}
    candidates: dict[tuple[int, int], Hit] = {}
    if request.mode != "semantic":
        for hit in ranked[:RERANK_WINDOW]:
            hit.similarity = sims.of(hit.doc)
            hit.semantic_match = hit.similarity >= min_similarity
            candidates[hit.key] = hit
    for key, (similarity, doc) in found.items():
        if key not in candidates:
            step_id = str(doc["step_id"][0])
            hit = Hit(key, doc, step_id, int(doc["created"][0]), similarity=similarity)
            hit.keyword = 0.0 if key in matching else None
            hit.semantic_match = True
            hit.exact = key in exact_keys
            candidates[key] = hit
    if request.mode == "semantic":
        return fuse(list(candidates.values()), 1.0), len(candidates)
    explained = max((hit.coverage for hit in ranked[:RERANK_WINDOW]), default=0.0)
    fused = fuse(list(candidates.values()), semantic_weight(explained))
    fused += [hit for hit in ranked[RERANK_WINDOW:] if hit.key not in candidates]
    fused = [hit for hit in fused if hit.exact] + [hit for hit in fused if not hit.exact]
    semantic_only = sum(1 for key in found if key not in matching)
    return fused, total + semantic_only


def _keyword_matches(
    view: ReadView,
    plan: PlannedQuery,
    found: dict[tuple[int, int], tuple[float, Any]],
    ranked: list[Hit],
) -> set[tuple[int, int]]:
    """Which semantic candidates the keyword query matches (retrieval clauses, as `total`
    counts). A keyword hit outside the exact tier was retrieved by those very clauses, so only
    the others are asked of the index."""
    if not found or not plan.clauses:
        return set()
    retrieved = {hit.key for hit in ranked if not hit.exact}
    ids = [str(doc["step_id"][0]) for key, (_, doc) in found.items() if key not in retrieved]
    matching = found.keys() & retrieved
    if not ids:
        return matching
    query = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, one_of(view.schema, "step_id", ids)),
            (tantivy.Occur.Must, scored_query(view.schema, plan.clauses)),
        ]
    )
    found_ids = view.searcher.search(query, limit=len(ids), count=False)
    return matching | {doc_key(address) for _, address in found_ids.hits}
