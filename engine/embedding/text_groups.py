"""Near-identical texts of a generation's vector store, grouped (duplicates, `relatedCount`).

The store holds one vector per distinct text (`engine.embedding.vectors`), so identical texts are
one group by construction; near-identical ones are grouped here. A text joins the most similar
earlier *leader* (the first text of a group, in the order texts were first stored) whose cosine
is at least the threshold, else it leads a group of its own: every member is within the
threshold of its leader, so groups never chain into a blur, and a text's group never changes as
later texts arrive — the grouping of a growing store is extended, not recomputed.

Similarity alone never merges two things with different names: `SR-52` and `SR-53`,
`token-1` and `token-2`, `coin-overview-send` and `eth-overview-send` embed almost alike.
Texts are only compared within the same `identifiers` (their numbers, and the identifiers
`engine.index.step_texts` writes in parentheses: a target's testId or selector, a session's
flowTags). A key whose text is unknown (a store written before texts were kept) stays alone.
"""

import re
from dataclasses import dataclass, field

import numpy as np

from engine.embedding.embedder import Vectors
from engine.embedding.vectors import VectorReader

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
class _Bucket:
    """The rows of one `identifiers` value: only they can be grouped together."""

    rows: list[int] = field(default_factory=list)
    """In store order."""
    grouped: int = 0
    """How many of `rows` are grouped (a bucket is grouped when first asked about)."""
    leaders: list[int] = field(default_factory=list)
    members: dict[int, list[int]] = field(default_factory=dict)
    """Rows per leader row."""


@dataclass
class TextGroups:
    """Leader grouping of the store's rows at one threshold, extended as the store grows.

    Texts are sorted into buckets by `identifiers` when they arrive (a regex per text); a
    bucket is grouped when a question first needs it, so a search asking about the twenty
    texts of its page groups a few small buckets, not the whole store."""

    threshold: float
    keys: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    """The store's keys and their rows, as far as sorted into buckets."""
    _matrix: Vectors = field(default_factory=lambda: np.zeros((0, 0), np.float32))
    _bucket_of: list[_Bucket] = field(default_factory=list)
    _buckets: dict[tuple[str, ...], _Bucket] = field(default_factory=dict)
    _leader: dict[int, int] = field(default_factory=dict)

    def extend(self, vectors: VectorReader, texts: dict[str, str]) -> None:
        """Sort the store's rows past those already sorted into their buckets."""
        self._matrix, self.keys, self.rows = vectors.matrix, vectors.keys, vectors.rows
        for row in range(len(self._bucket_of), len(self.keys)):
            text = texts.get(self.keys[row])
            # An unknown text gets a bucket of its own: it can only be identical to itself.
            signature = identifiers(text) if text is not None else ("\0", str(row))
            bucket = self._buckets.setdefault(signature, _Bucket())
            bucket.rows.append(row)
            self._bucket_of.append(bucket)

    @property
    def size(self) -> int:
        """Rows sorted so far."""
        return len(self._bucket_of)

    def group_of(self, key: str) -> tuple[int | str, list[str]]:
        """The id of a text's group (its leader's row) and the keys of the group's texts; a
        key not in the store is a group of its own, named by the key."""
        row = self.rows.get(key)
        if row is None or row >= len(self._bucket_of):
            return key, [key]
        bucket = self._bucket_of[row]
        self._settle(bucket)
        leader = self._leader[row]
        return leader, [self.keys[r] for r in bucket.members[leader]]

    def leaders(self) -> list[int]:
        """The leader row of every row (groups every bucket)."""
        for bucket in self._buckets.values():
            self._settle(bucket)
        return [self._leader[row] for row in range(len(self._bucket_of))]

    def _settle(self, bucket: _Bucket) -> None:
        """Assign the bucket's rows not grouped yet (in order) to its leaders, new leaders
        joining as they come."""
        rows = bucket.rows[bucket.grouped :]
        bucket.grouped = len(bucket.rows)
        for first in range(0, len(rows), BLOCK):
            block = rows[first : first + BLOCK]
            vectors = np.asarray(self._matrix[block], np.float32)
            leaders = bucket.leaders
            known = vectors @ np.asarray(self._matrix[leaders], np.float32).T if leaders else None
            inner = vectors @ vectors.T
            fresh: list[int] = []  # positions in `block` of its rows that became leaders
            for i, row in enumerate(block):
                best_row, best = -1, self.threshold
                if known is not None:
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
                    best_row = row
                    bucket.members[row] = []
                self._leader[row] = best_row
                bucket.members[best_row].append(row)
            leaders.extend(block[i] for i in fresh)


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
        if grouping.size < len(keys):
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
