"""Fusing the keyword and the semantic leg: weight meaning by what the words leave unexplained.

No fixed weight serves both paraphrases and identifiers (measured with `scripts/bench_quality.py`;
docs/architecture.md, engine/meaning/). So the semantic weight is per query, `w = 1 - explained**2`,
where `explained` is the query-word coverage of the keyword leg's best hit (the share of the query's
words, with their stems, synonyms, glossary translations (`analyzers.glossary`: a hit holding
`password` explains `passcode`) and typo corrections, that it contains; not the best coverage
anywhere in the rerank window, which would let one hit of 100 that happened to hold two words of
three speak for a keyword answer that did not). A query whose words the best keyword hit fully
contains is answered by keywords; one that shares no word with the records is answered by meaning;
one the keywords explain only in part leans to meaning (half explained: w = 0.75), since the words a
paraphrase shares with the records are mostly the common ones ("wallet", "page", "the"). Each
candidate (the keyword rerank window plus the semantic candidates) scores

    (1 - w) * keyword / best keyword  +  w * (similarity - lowest) / (best - lowest)

where `lowest` is the farthest candidate's similarity: this model's cosines for unrelated texts
are ~0.1-0.2, not 0, so dividing by the best alone squeezed every semantic candidate into the
top of the scale (`scripts/bench_quality.py`). A step holding a whole
identifier the query typed (the keyword leg's exact tier, `engine.search.step_search._tiers`) ranks
above every other, whatever the fusion, and a step that failed with an error the query names (its
failure tier) above every other but those.
"""

from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import tantivy

from engine.query import ReadView

RERANK_WINDOW = 100
"""Keyword hits reranked (and fused with the semantic candidates) per search."""


@dataclass(slots=True)
class Hit:
    """A candidate of either leg, with what each leg said about it. Its stored document is
    read when first asked for (most semantic candidates never reach a page: they are scored
    from fast fields, `engine.meaning.semantic_leg.Similarities.of_documents`). Slotted: a search
    makes hundreds of them."""

    key: tuple[int, int]
    address: tantivy.DocAddress
    view: ReadView
    created: int
    keyword: float | None = None
    """Keyword score after the rerank (None: not a keyword match)."""
    similarity: float | None = None
    semantic_match: bool = False
    """A semantic hit: similarity at least the request's minimum."""
    exact: bool = False
    """In the keyword leg's first tier: it holds a whole identifier the query typed."""
    failed: bool = False
    """It failed with an error of a kind the query names (the keyword leg's failure tier):
    ranked after exact matches, before every other hit."""
    lead: bool = False
    """It worked with what an identifier the query typed was renamed to: ranked before every
    other hit (`engine.search.step_search`, the successors' tier)."""
    turn: int = 0
    """A lead hit's place among those of its successor (0: the best): leads go a turn each,
    so one old id renamed on several screens shows each successor first."""
    coverage: float = 0.0
    """The share of the query's concepts it covers (keyword hits of the rerank window)."""
    held: int = 0
    """Which of the query's concepts it holds, as a bit mask (keyword hits of the rerank
    window): what the answer's coverage is made of (`engine.query.coverage`)."""
    score: float = 0.0
    tie: tuple[bool, int, bool, bool, float, int] | None = None
    """The key `fuse` ordered it by: hits with equal keys go in step-id order (`settle`)."""
    read: Any = None
    """The stored document, once read (`doc`)."""
    read_id: str | None = None
    """Its step id, once read (`step_id`: a page asks for it several times)."""

    @property
    def doc(self) -> Any:
        if self.read is None:
            self.read = self.view.doc(self.address)
        return self.read

    @property
    def step_id(self) -> str:
        if self.read_id is None:
            self.read_id = str(self.doc["step_id"][0])
        return self.read_id

    @property
    def session_id(self) -> str:
        return str(self.doc["session_id"][0])

    @property
    def match_type(self) -> str:
        if self.keyword is not None and self.semantic_match:
            return "both"
        return "keyword" if self.keyword is not None else "semantic"


def settle(hits: list[Hit], start: int, end: int) -> None:
    """Put the hits that `fuse` left tied (equal `tie`) in step-id order wherever they touch
    `hits[start:end]`, in place: the order is then that of sorting by (tie, step id), but only
    the tied hits a page reaches have their documents read for their step ids."""
    start, end = min(start, len(hits)), min(end, len(hits))
    while 0 < start < len(hits) and _tied(hits[start - 1], hits[start]):
        start -= 1
    while 0 < end < len(hits) and _tied(hits[end - 1], hits[end]):
        end += 1
    run = start
    for i in range(start + 1, end + 1):
        if i == end or not _tied(hits[i - 1], hits[i]):
            if i - run > 1:
                hits[run:i] = sorted(hits[run:i], key=lambda hit: hit.step_id)
            run = i


def _tied(first: Hit, second: Hit) -> bool:
    return first.tie is not None and first.tie == second.tie


SENTENCE_MEANING = 0.4
"""The least the semantic leg counts for a query that reads as a sentence
(`analyzers.is_sentence`): the words a sentence shares with a step say less of what it asks
than its meaning does. Measured on every query set (`scripts/bench_quality.py`, hybrid nDCG@10
against no floor): 0.4 lifted the agent dev (+0.018) and blind (+0.015) sets, held the
outside-voice sets (+0.004, 0.000) and lowered none; 0.5 and 0.6 lowered a paraphrase set, 0.7
and more the kit's outside-voice sentences."""
SENTENCE_MEANING_AT_MOST = 0.6
"""The most a sentence's floor rises to when its nearest step by meaning is that similar: how
much the meaning leg matched of the sentence says how far to trust it (a nearest step at 0.6
is more often relevant than not: `engine.query.coverage.MEANING_CALIBRATION`), while a
sentence nothing is near keeps the words' say. Measured on every query set in one run
(`docs/benchmarks.md`): no set lower, both outside-voice sets higher; a ceiling of 0.65 or
more lowered the kit's outside-voice sentences."""


def semantic_weight(explained: float, sentence: bool = False, nearest: float = 0.0) -> float:
    """How much the semantic leg counts: what the keyword leg leaves unexplained, squared
    coverage (ranked better than 1 - explained: `scripts/bench_quality.py`), and for a
    `sentence` at least its nearest step's similarity (`nearest`), between `SENTENCE_MEANING`
    and `SENTENCE_MEANING_AT_MOST`."""
    covered = min(1.0, max(0.0, explained))
    weight = 1.0 - covered * covered
    if not sentence:
        return weight
    return max(weight, min(max(nearest, SENTENCE_MEANING), SENTENCE_MEANING_AT_MOST))


def fuse(hits: list[Hit], weight: float) -> list[Hit]:
    """Score and order the candidates: the steps that work with what an identifier the query
    typed was renamed to first (a turn each per successor), then exact matches (a
    semantic-only hit never outranks one), then the failures of a kind the query names, then
    the convex combination, newest session, step
    id (a stable order for paging; hits tied but for their step ids are ordered by `settle`,
    once a page needs it)."""
    best_kw = max((h.keyword for h in hits if h.keyword is not None), default=0.0) or 1.0
    similar = [h.similarity for h in hits if h.similarity]
    low, best_sim = min(similar, default=0.0), max(similar, default=0.0)
    span = best_sim - low
    for hit in hits:
        kw = (hit.keyword or 0.0) / best_kw
        sim = 0.0
        if hit.similarity:
            sim = (hit.similarity - low) / span if span > 0 else 1.0
        hit.score = (1 - weight) * kw + weight * sim
        hit.tie = (
            not hit.lead,
            hit.turn,
            not hit.exact,
            not hit.failed,
            -round(hit.score, 9),
            -hit.created,
        )
    hits.sort(key=attrgetter("tie"))
    return hits


def keyword_scores(hits: list[Hit]) -> None:
    """A keyword answer's scores on the scale the fusion uses (`fuse` with no weight on meaning):
    each hit's keyword score relative to the best one's. The rerank window's scores carry the
    rerank's factors and the hits past it plain BM25, so past the window a score may read
    higher than the window's last; `descending` caps it."""
    best = max((hit.keyword or 0.0 for hit in hits), default=0.0) or 1.0
    for hit in hits:
        hit.score = (hit.keyword or 0.0) / best


def descending(hits: list[Hit]) -> None:
    """Make the scores of an ordered answer never increase down it, in place: a hit's score is
    at most the one's before it. The order is the tiers' first (what an identifier typed was
    renamed to, exact identifiers, failures named), then the score: a hit of a later tier can
    score higher than the last of an earlier one, and is shown at that one's score, so that an
    agent reading the scores reads the order."""
    ceiling = 1.0
    for hit in hits:
        ceiling = min(ceiling, max(0.0, hit.score))
        hit.score = ceiling
