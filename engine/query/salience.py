"""Salience: how much a remembered step has helped, from its recall links, at query time.

Each recall (a later session followed the step and it worked, see `engine.history.recall_links`)
adds evidence that fades with its age: `strength = RECALL_WEIGHT · 0.5^(age / HALF_LIFE_DAYS)`, and
`salience = 1 − ∏ (1 − strength)` over the step's recalls, so it is 0 for a step nobody
recalled, grows with each recall but never reaches 1, and decays with the time since the last
recalls (computed from the query's clock, never by a background job). Outcomes enter through
the links themselves: only actions that worked are recorded as recalls.

In ranking it is a bounded factor, `1 + SALIENCE_WEIGHT · salience` (≤ 1.15): a tie-breaker
between comparable results that never lifts a result above an exact match — a result that
covers every concept of the query (`engine.search.step_search` caps the lift there).
"""

import math
from collections.abc import Iterable
from dataclasses import dataclass

import tantivy

from engine.index import DOC_STEP, one_of, term
from engine.records import DAY_MS

RECALL_WEIGHT = 0.3
HALF_LIFE_DAYS = 30.0
SALIENCE_WEIGHT = 0.15
MAX_LINKS = 100_000
"""Recall links read for one query (a bound on a query's work, far above real use)."""


@dataclass(frozen=True, slots=True)
class Recalls:
    """A step's recalls: how many, and how salient it is now."""

    count: int
    salience: float


NO_RECALLS = Recalls(0, 0.0)


def salience_of(recall_times_ms: Iterable[int], now_ms: int) -> float:
    remaining = 1.0
    for at in recall_times_ms:
        age_days = max(0, now_ms - at) / DAY_MS
        remaining *= 1 - RECALL_WEIGHT * math.pow(0.5, age_days / HALF_LIFE_DAYS)
    return 1 - remaining


def salience_factor(salience: float) -> float:
    return 1 + SALIENCE_WEIGHT * salience


def lifted(scores: list[float], exact: list[bool], saliences: list[float]) -> list[float]:
    """Each score times its salience factor, except that a result which is not an exact match
    is lifted at most to just below the lowest exact match that scored at least as high as it
    did before the lift: salience reorders comparable results, it never overtakes an exact one
    (nor does it ever lower a score)."""
    if not any(saliences):  # nothing recalled (the common case): every factor is 1
        return list(scores)
    boosted = [s * salience_factor(v) for s, v in zip(scores, saliences, strict=True)]
    exact_scores = [b for b, e in zip(boosted, exact, strict=True) if e]
    final = []
    for score, boost, is_exact in zip(scores, boosted, exact, strict=True):
        ceilings = [x for x in exact_scores if x >= score] if not is_exact else []
        final.append(max(score, min(boost, min(ceilings) * (1 - 1e-9))) if ceilings else boost)
    return final


def recalls(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    step_ids: Iterable[str] | None,
    now_ms: int,
) -> dict[str, Recalls]:
    """The recalls of `step_ids` (None: of every recalled step), by step id; steps nobody
    recalled are left out. One query over the recalling steps' `recalled` field, asked only
    about the steps that field names at all: a dictionary lookup each (it may count deleted
    links, which the query then drops), so a page nobody recalled, the common case, costs no
    query (a term-set query over the window's ids would run twice per search); an index without
    any link (nobody followed a step yet) is not asked about each step."""
    if not searcher.terms_with_prefix("recalled", "", None, 1):
        return {}
    wanted = (
        None
        if step_ids is None
        else {step_id for step_id in step_ids if searcher.doc_freq("recalled", step_id)}
    )
    if wanted is not None and not wanted:
        return {}
    links = (
        one_of(schema, "recalled", sorted(wanted))
        if wanted is not None
        else tantivy.Query.regex_query(schema, "recalled", ".+")
    )
    query = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, term(schema, "doc_type", DOC_STEP)), (tantivy.Occur.Must, links)]
    )
    found = searcher.search(query, limit=MAX_LINKS)
    times: dict[str, list[int]] = {}
    for _, address in found.hits:
        doc = searcher.doc(address)
        at = int(doc["ts"][0])
        for memory in doc["recalled"]:
            if wanted is None or memory in wanted:
                times.setdefault(str(memory), []).append(at)
    return {
        memory: Recalls(len(ats), round(salience_of(ats, now_ms), 4))
        for memory, ats in times.items()
    }
