"""`matchedFields` of a page of results: why each one matched, never nothing.

Most evidence comes from the stored payload (`engine.query.evidence`), with the values shown. But
the payload keeps what a result displays, not every indexed value: a step's visible testIds, the
route it landed on and accessibility text past the first nodes are indexed, not stored. For
those, the index itself is asked which of the query's (field, token) clauses a result holds —
one small query per clause over the page's steps — and the answer reads `visible:<token>`.

Order: matches of a whole identifier the query typed come first (they decide the ranking, see
`engine.search.step_search._tiers`), then the rest, strongest field first.
"""

from collections.abc import Sequence

import tantivy

from engine.index import StepPayload, all_of, doc_key, one_of
from engine.query import Clause, PlannedQuery, ReadView, match_evidence

UNSTORED_FIELDS = frozenset({"visible", "landed", "notice", "a11y"})
"""Scored fields whose values the payload holds only in part (or not at all)."""

DocKey = tuple[int, int]


def page_evidence(
    view: ReadView, page: Sequence[tuple[DocKey, str, StepPayload]], plan: PlannedQuery
) -> list[list[str]]:
    """The `matchedFields` of each (document, stepId, payload) of a page, in page order."""
    step_ids = {key: step_id for key, step_id, _ in page}
    whole = [match_evidence(payload, plan.whole_tokens) for _, _, payload in page]
    rest = [match_evidence(payload, plan.tokens) for _, _, payload in page]
    # A whole identifier the payload cannot show (say a visible testId) is asked of the index.
    unshown = {k: step_ids[k] for (k, _, _), shown in zip(page, whole, strict=True) if not shown}
    exact = [c for c in plan.exact_clauses() if c.field in UNSTORED_FIELDS]
    indexed_whole = clauses_held(view, unshown, exact)
    # Every result matched some clause; one whose payload shows none is asked about them all.
    silent = {
        k: step_ids[k]
        for (k, _, _), fields in zip(page, rest, strict=True)
        if not fields and not indexed_whole.get(k)
    }
    indexed_any = clauses_held(view, silent, plan.all_clauses)
    return [
        list(
            dict.fromkeys([*shown, *indexed_whole.get(key, []), *fields, *indexed_any.get(key, [])])
        )
        for (key, _, _), shown, fields in zip(page, whole, rest, strict=True)
    ]


def clauses_held(
    view: ReadView, step_ids: dict[DocKey, str], clauses: Sequence[Clause]
) -> dict[DocKey, list[str]]:
    """`field:token` of each clause that each of these documents holds, in clause order."""
    held: dict[DocKey, list[str]] = {key: [] for key in step_ids}
    if not step_ids or not clauses:
        return held
    only = one_of(view.schema, "step_id", list(step_ids.values()))
    for field, token in dict.fromkeys((c.field, c.token) for c in clauses):
        query = all_of(only, tantivy.Query.term_query(view.schema, field, token))
        for _, address in view.searcher.search(query, limit=len(step_ids)).hits:
            if (key := doc_key(address)) in held:
                held[key].append(f"{field}:{token}")
    return held
