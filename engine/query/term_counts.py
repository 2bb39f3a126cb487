"""What a searcher's term dictionaries say of a query word, kept for the next searches.

Planning a query (`engine.query.plan.plan_query`) asks every scored field how many documents hold
each word, its synonyms and its prefix completions: ~18 words a query, each looked up in ~22 fields
(~400 `doc_freq` calls), plus the completions of each word the query typed. Queries share their
words: the 238 different queries of the speed benchmark plan 4,242 words, only 635 of them distinct.
The answers cannot change while the searcher does (a searcher sees one commit), so they are kept per
searcher object, as `engine.query.doc_store_cache` keeps its documents: a reload starts afresh:
planning a query then mostly looks up what it knows (`scripts/bench_search_ab.py --phases` times
`plan_query`). The semantic leg asks it too which fields hold a text's key
(`engine.meaning.semantic_leg.nearest_steps`).
"""

from collections.abc import Mapping
from typing import TypeVar

import tantivy

from engine.index import SCORED_FIELDS

MAX_KEPT_WORDS = 50_000
"""Words kept (each a few fields' counts, or a few completions): a few MB at most; when full,
everything is dropped at once (the vocabulary agents search with is far smaller)."""
PREFIX_SCAN = 64
"""Terms read per field when completing a prefix (Tantivy's terms are in byte order)."""

K = TypeVar("K")
V = TypeVar("V")


class TermCounts:
    """Document frequencies and prefix completions of one searcher's scored fields."""

    def __init__(self, searcher: tantivy.Searcher, capacity: int = MAX_KEPT_WORDS) -> None:
        self.searcher = searcher
        self._capacity = capacity
        self._counts: dict[tuple[str, tuple[str, ...]], Mapping[str, int]] = {}
        self._completions: dict[str, tuple[tuple[str, int], ...]] = {}

    def doc_freqs(self, token: str, fields: tuple[str, ...] = SCORED_FIELDS) -> Mapping[str, int]:
        """Per field of `fields` holding `token`: how many documents hold it there."""
        known = self._counts.get((token, fields))
        if known is None:
            searcher = self.searcher
            known = {f: n for f in fields if (n := searcher.doc_freq(f, token)) > 0}
            self._keep(self._counts, (token, fields), known)
        return known

    def completions(self, prefix: str) -> tuple[tuple[str, int], ...]:
        """The other terms starting with `prefix` (within the first `PREFIX_SCAN` of each
        field), each with its document count summed over the fields, most common first."""
        known = self._completions.get(prefix)
        if known is None:
            counts: dict[str, int] = {}
            for field in SCORED_FIELDS:
                for candidate, df in self.searcher.terms_with_prefix(
                    field, prefix, None, PREFIX_SCAN
                ):
                    if candidate != prefix:
                        counts[candidate] = counts.get(candidate, 0) + df
            known = tuple(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
            self._keep(self._completions, prefix, known)
        return known

    def _keep(self, kept: dict[K, V], key: K, value: V) -> None:
        # Plain dict writes: threads racing on one word compute the same answer.
        if len(kept) >= self._capacity:
            kept.clear()
        kept[key] = value
