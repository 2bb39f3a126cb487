"""`matchedFields` of a page of results: why each one matched, never nothing, and only fields
that hold what the query said (`engine.query.evidence.QueryWords`).

Most evidence comes from the stored payload (`engine.query.evidence`), with the values shown. But
the payload keeps what a result displays, not every indexed value: a step's visible testIds, the
route it landed on and accessibility text past the first nodes are indexed, not stored. For
those, the index itself is asked which of the query's (field, token) clauses a result holds —
one small query per clause over the page's steps — and the answer reads `visible:<token>`.

Order: matches of a whole identifier the query typed come first (they decide the ranking, see
`engine.search.step_search._tiers`), then the rest, strongest field first. A result that holds
no more than parts of an identifier typed whole (found by its parts, or by meaning) names
them as such (`testId:eth-overview-swap (part: overview)`); one found by meaning alone says
so (`engine.meaning.meaning_fields`).
"""

from collections.abc import Sequence
from functools import cache

import tantivy

from engine.index import StepPayload, all_of, doc_key, one_of
from engine.query import Clause, PlannedQuery, QueryWords, ReadView, match_evidence

UNSTORED_FIELDS = frozenset({"visible", "landed", "notice", "a11y"})
"""Scored fields whose values the payload holds only in part (or not at all)."""

DocKey = tuple[int, int]
_Page = Sequence[tuple[DocKey, str, StepPayload]]


def page_evidence(view: ReadView, page: _Page, plan: PlannedQuery) -> list[list[str]]:
    """The `matchedFields` of each (document, stepId, payload) of a page, in page order."""
    said = QueryWords.said(plan)
    # A page's results share most of their values (screen, roles and names on it, flowTags):
    # each distinct value is judged once.
    why = cache(said.why)
    step_ids = {key: step_id for key, step_id, _ in page}
    whole = cache(QueryWords(plan.whole_tokens).why)
    found = {
        key: match_evidence(payload, whole) if plan.whole_tokens else [] for key, _, payload in page
    }
    # A whole identifier the payload cannot show (say a visible testId) is asked of the index.
    exact = [c for c in plan.exact_clauses() if c.field in UNSTORED_FIELDS]
    _add(found, clauses_held(view, _silent(found, step_ids), exact))
    for key, _, payload in page:
        found[key] += match_evidence(payload, why)
    # A result whose payload shows none of the query's words is asked about them all.
    words = [c for c in plan.all_clauses if c.token in said.words]
    _add(found, clauses_held(view, _silent(found, step_ids), words))
    if said.parts:  # last, what a result holding only parts of an identifier typed whole holds
        for key, _, payload in page:
            if not found[key]:
                found[key] = match_evidence(payload, said.shared)
        shared = [c for c in plan.all_clauses if c.token in said.part_tokens]
        for key, held in clauses_held(view, _silent(found, step_ids), shared).items():
            found[key] += [_part_label(said, label) for label in held]
    return [list(dict.fromkeys(found[key])) for key, _, _ in page]


def _part_label(said: QueryWords, label: str) -> str:
    """`visible:coin-swap (part: coin)`; but a token holding every part of an identifier
    (`visible:coin-overview-send` for `coin-send-overview`: a completion of `coin`) is plain."""
    token = label.split(":", 1)[1]
    return label if said.why(token) == "" else f"{label} (part: {said.part_named(token)})"


def _silent(found: dict[DocKey, list[str]], step_ids: dict[DocKey, str]) -> dict[DocKey, str]:
    """The results without evidence so far (to be asked of the index)."""
    return {key: step_ids[key] for key, fields in found.items() if not fields}


def _add(found: dict[DocKey, list[str]], held: dict[DocKey, list[str]]) -> None:
    for key, fields in held.items():
        found[key] += fields


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
