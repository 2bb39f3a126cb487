"""The index's vocabulary of words, for typo correction without scanning terms per query.

A one-deletion neighbourhood index (SymSpell's idea): every known word is filed under itself
and each string made by deleting one of its letters; a query word looks up the same keys, and
the few candidates found are checked with the real edit distance. `sned` and `send` meet under
`snd`; `confrim` and `confirm` under `confim`/`conirm`…. Only word-like terms (4-24 letters) of
the fields people type words for are kept: ids, hex and digits are never typo targets.
"""

import re
import time
from collections import defaultdict

import tantivy

from analyzers import edit_distance, max_typo_edits
from engine.index import TYPO_FIELDS

WORD = re.compile(r"[a-z]{4,24}")
REFRESH_SECONDS = 60.0
"""A vocabulary this old is rebuilt on next use; words newer than that only miss typo help."""


def _deletions(word: str) -> set[str]:
    return {word} | {word[:i] + word[i + 1 :] for i in range(len(word))}


class TypoVocabulary:
    def __init__(self, searcher: tantivy.Searcher) -> None:
        self.built_at = time.monotonic()
        counts: dict[str, int] = {}
        for field in TYPO_FIELDS:
            for term, df in searcher.terms_with_prefix(field, "", None, None):
                if WORD.fullmatch(term):
                    counts[term] = counts.get(term, 0) + df
        self.doc_freq = counts
        self._keys: dict[str, list[str]] = defaultdict(list)
        for word in counts:
            for key in _deletions(word):
                self._keys[key].append(word)

    @property
    def stale(self) -> bool:
        return time.monotonic() - self.built_at > REFRESH_SECONDS

    def corrections(self, token: str) -> list[tuple[str, int]]:
        """Known words within the allowed edit distance of `token`: (word, distance), closest
        and most frequent first. Never `token` itself: callers ask about words the live index
        does not hold, which a vocabulary up to a minute old may still list."""
        limit = max_typo_edits(token)
        if limit == 0 or not WORD.fullmatch(token):
            return []
        candidates = {w for key in _deletions(token) for w in self._keys.get(key, ())}
        found = [(w, d) for w in candidates if 0 < (d := edit_distance(token, w, limit)) <= limit]
        return sorted(found, key=lambda wd: (wd[1], -self.doc_freq[wd[0]], wd[0]))
