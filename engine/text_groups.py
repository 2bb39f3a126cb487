"""Near-identical texts of a generation's vector store, grouped (duplicates, `relatedCount`).

The store holds one vector per distinct text (`engine.vectors`), so identical texts are one
group by construction; near-identical ones are grouped here. A text joins the most similar
earlier *leader* (the first text of a group, in the order texts were first stored) whose cosine
is at least the threshold, else it leads a group of its own: every member is within the
threshold of its leader, so groups never chain into a blur, and a text's group never changes as
later texts arrive — the grouping of a growing store is extended, not recomputed.

Similarity alone never merges two things with different names: `SR-52` and `SR-53`,
`token-1` and `token-2`, `coin-overview-send` and `eth-overview-send` embed almost alike.
Texts are only compared within the same `identifiers` (their numbers, and the identifiers
`engine.memory_text` writes in parentheses: a target's testId or selector, a session's flowTags).
A key whose text is unknown (a store written before texts were kept) stays alone.
"""

import re
from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np

from engine.embedder import Vectors
from engine.vectors import VectorReader

DEFAULT_THRESHOLD = 0.95
"""Spec 004's `similarity_threshold` default: what `relatedCount` on search results uses."""
BLOCK = 512
"""Texts compared with their bucket's leaders in one matrix product."""

_NUMBER = re.compile(r"\d+")
_PARENTHESIZED = re.compile(r"\(([^()]*)\)")


def identifiers(text: str) -> tuple[str, ...]:
    """What must agree for two texts to be the same memory: every number, in order, and every
    parenthesized identifier (`click button "Send" (coin overview send) on the home screen`)."""
    names = (part.strip().lower() for part in _PARENTHESIZED.findall(text))
    return (*_NUMBER.findall(text), "|", *names)


@dataclass
class TextGroups:
    """Leader grouping of the store's rows at one threshold, extended as the store grows."""

    threshold: float
    leader_of: list[int] = field(default_factory=list)
    """Per store row: the row of its group's leader (itself for a leader)."""
    keys: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    """The store's keys and their rows, as far as grouped."""
    _buckets: dict[tuple[str, ...], list[int]] = field(default_factory=lambda: defaultdict(list))
    """Leader rows per `identifiers` value."""
    _members: dict[int, list[int]] | None = None

    def extend(self, vectors: VectorReader, texts: dict[str, str]) -> None:
        """Group the store's rows past those already grouped."""
        matrix, keys = vectors.matrix, vectors.keys
        self.keys, self.rows = keys, vectors.rows
        start = len(self.leader_of)
        pending: dict[tuple[str, ...], list[int]] = defaultdict(list)
        for row in range(start, len(keys)):
            text = texts.get(keys[row])
            # An unknown text gets a bucket of its own: it can only be identical to itself.
            pending[identifiers(text) if text is not None else ("\0", str(row))].append(row)
        self.leader_of.extend(range(start, len(keys)))
        self._members = None
        for signature, rows in pending.items():
            self._group(matrix, self._buckets[signature], rows)

    def _group(self, matrix: Vectors, leaders: list[int], rows: list[int]) -> None:
        """Assign `rows` (in order) to the bucket's leaders, new leaders joining as they come."""
        for first in range(0, len(rows), BLOCK):
            block = rows[first : first + BLOCK]
            vectors = np.asarray(matrix[block], np.float32)
            known = vectors @ np.asarray(matrix[leaders], np.float32).T if leaders else None
            inner = vectors @ vectors.T
            fresh: list[int] = []  # positions in `block` of its rows that became leaders
            for i, row in enumerate(block):
                best_row, best = -1, self.threshold
                if known is not None and len(leaders):
                    j = int(np.argmax(known[i]))
                    if known[i, j] >= best:
                        best_row, best = leaders[j], float(known[i, j])
                if fresh:
                    sims = inner[i, fresh]
                    j = int(np.argmax(sims))
                    if sims[j] > best or (best_row < 0 and sims[j] >= best):
                        best_row = block[fresh[j]]
                if best_row < 0:
                    fresh.append(i)
                else:
                    self.leader_of[row] = best_row
            leaders.extend(block[i] for i in fresh)

    def group_of(self, key: str) -> tuple[int | str, list[str]]:
        """The id of a text's group (its leader's row) and the keys of the group's texts; a
        key not grouped (not in the store) is a group of its own, named by the key."""
        row = self.rows.get(key)
        if row is None or row >= len(self.leader_of):
            return key, [key]
        if self._members is None:
            self._members = defaultdict(list)
            for member, leader in enumerate(self.leader_of):
                self._members[leader].append(member)
        leader = self.leader_of[row]
        return leader, [self.keys[r] for r in self._members[leader]]


@dataclass
class GroupCache:
    """The groupings of one generation's store, kept while the store is the same or grew.

    The default threshold's grouping serves every search (`relatedCount`); other thresholds
    are kept too (one per threshold asked, the last few), each extended when texts arrive."""

    vectors: VectorReader
    _groups: dict[float, TextGroups] = field(default_factory=dict)
    _texts: dict[str, str] = field(default_factory=dict)

    MAX_THRESHOLDS = 4

    def groups(self, threshold: float = DEFAULT_THRESHOLD) -> TextGroups:
        self.vectors.refresh()
        keys = self.vectors.keys
        grouping = self._groups.pop(threshold, None) or TextGroups(threshold)
        if len(grouping.leader_of) < len(keys):
            grouping.extend(self.vectors, self.texts())
        self._groups[threshold] = grouping  # most recently used last
        while len(self._groups) > self.MAX_THRESHOLDS:
            del self._groups[next(iter(self._groups))]
        return grouping

    def texts(self) -> dict[str, str]:
        """The embedded texts by key, read again when the store grew."""
        self.vectors.refresh()
        if len(self._texts) < len(self.vectors.keys):
            self._texts = self.vectors.texts()
        return self._texts

    def text(self, key: str) -> str | None:
        return self.texts().get(key)
