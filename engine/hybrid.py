"""Fusing the keyword and the semantic leg: weight meaning by what the words leave unexplained.

No fixed weight serves both paraphrases and identifiers (measured: docs/ARCHITECTURE.md
"Semantic search"). So the semantic weight is per query, `w = 1 - explained**2`, where
`explained` is the best query-word coverage among the top keyword hits (the share of the
query's words, with their stems, synonyms and typo corrections, that a hit contains). A query
whose words a step fully contains is answered by keywords; one that shares no word with the
records is answered by meaning; one the keywords explain only in part leans to meaning (half
explained: w = 0.75), since the words a paraphrase shares with the records are mostly the
common ones ("wallet", "page", "the"). Each candidate (the keyword rerank window plus the semantic
candidates) scores

    (1 - w) * keyword / best keyword  +  w * similarity / best similarity

and a step holding a whole identifier the query typed (the keyword leg's exact tier,
`engine.search._tiers`) ranks above every other, whatever the fusion.
"""

from dataclasses import dataclass
from typing import Any

RERANK_WINDOW = 100
"""Keyword hits reranked (and fused with the semantic candidates) per search."""


@dataclass
class Hit:
    """A candidate of either leg, with what each leg said about it."""

    key: tuple[int, int]
    doc: Any
    step_id: str
    created: int
    keyword: float | None = None
    """Keyword score after the rerank (None: not a keyword match)."""
    similarity: float | None = None
    semantic_match: bool = False
    """A semantic hit: similarity at least the request's minimum."""
    exact: bool = False
    """In the keyword leg's first tier: it holds a whole identifier the query typed."""
    coverage: float = 0.0
    """The share of the query's concepts it covers (keyword hits of the rerank window)."""

    @property
    def session_id(self) -> str:
        return str(self.doc["session_id"][0])

    score: float = 0.0

    @property
    def match_type(self) -> str:
        if self.keyword is not None and self.semantic_match:
            return "both"
        return "keyword" if self.keyword is not None else "semantic"


def semantic_weight(explained: float) -> float:
    """How much the semantic leg counts: what the keyword leg leaves unexplained, squared
    coverage (measured against 1 - explained: docs/ARCHITECTURE.md "Fusion")."""
    covered = min(1.0, max(0.0, explained))
    return 1.0 - covered * covered


def fuse(hits: list[Hit], weight: float) -> list[Hit]:
    """Score and order the candidates: exact matches first (a semantic-only hit never
    outranks one), then the convex combination, newest session, step id (a stable order for
    paging)."""
    best_kw = max((h.keyword for h in hits if h.keyword is not None), default=0.0) or 1.0
    best_sim = max((h.similarity for h in hits if h.similarity is not None), default=0.0) or 1.0
    for hit in hits:
        kw = (hit.keyword or 0.0) / best_kw
        sim = (hit.similarity or 0.0) / best_sim
        hit.score = (1 - weight) * kw + weight * sim
    hits.sort(key=lambda h: (not h.exact, -round(h.score, 9), -h.created, h.step_id))
    return hits
