"""Near-identical memories: `find_duplicates` (spec 004) and `relatedCount` on search results.

Texts are grouped once per generation and threshold (`engine.embedding.text_groups`: one vector per
distinct text, so identical texts are one group by construction, and different identifiers
never merge); memories are then counted per text under the request's filters
(`engine.meaning.memories_by_text`). A group is reported when it holds two or more memories: many
steps with the very same text, or a few texts that say the same thing. Without vectors of the model
(an index not rebuilt since) only identical texts are grouped, and the answer says so.
"""

from collections import defaultdict
from dataclasses import dataclass, field

import numpy as np
import tantivy

from engine.core import DuplicateGroup, DuplicateList, DuplicatesInput, MemoryKind
from engine.embedding import DEFAULT_THRESHOLD, GroupCache, TextGroups
from engine.index import all_of, count, term
from engine.meaning.memories_by_text import KEY_FIELDS, KINDS, Memories, carrying, memories
from engine.query import ReadView, current_steps

STEP_KINDS: tuple[MemoryKind, ...] = ("step", "screen")
"""The types a search result can be (a step document's `memory_type`)."""
EXAMPLES = 5
VARIANTS = 4


@dataclass(frozen=True, slots=True)
class _Group:
    of: Memories
    keys: list[str]
    """Its texts present among the memories, most common first."""
    count: int


def find_duplicates(
    view: ReadView, cache: GroupCache | str, request: DuplicatesInput
) -> DuplicateList:
    """Groups of near-identical memories, largest first. `cache` is the generation's grouping,
    or why there is none (then only identical texts are grouped)."""
    kinds = [k for k in KINDS if k in (request.types or KINDS)]
    grouping = cache.groups(request.similarityThreshold) if isinstance(cache, GroupCache) else None
    found: list[_Group] = []
    considered = 0
    for kind in kinds:
        of_kind = memories(view, kind, request.filters, request.includeSuperseded)
        considered += of_kind.total
        found += _groups(of_kind, grouping)
    found.sort(key=lambda g: (-g.count, kinds.index(g.of.kind), g.keys[0]))
    shown = found[: request.limit]
    return DuplicateList(
        similarityThreshold=request.similarityThreshold,
        types=list(kinds),
        memories=considered,
        total=len(found),
        hasMore=len(found) > len(shown),
        groups=[_describe(view, g, cache) for g in shown],
        degraded=cache if isinstance(cache, str) else None,
    )


def _groups(of_kind: Memories, grouping: TextGroups | None) -> list[_Group]:
    """The present texts gathered by group, keeping groups of two or more memories."""
    per_key = of_kind.counts
    by_group: dict[int | str, list[str]] = defaultdict(list)
    for key in per_key:
        by_group[grouping.group_of(key)[0] if grouping else key].append(key)
    rows = grouping.rows if grouping else {}
    out = []
    for keys in by_group.values():
        total = sum(per_key[k] for k in keys)
        if total >= 2:
            keys.sort(key=lambda k: (-per_key[k], rows.get(k, -1), k))
            out.append(_Group(of_kind, keys, total))
    return out


def _describe(view: ReadView, group: _Group, cache: GroupCache | str) -> DuplicateGroup:
    texts = [cache.text(k) if isinstance(cache, GroupCache) else None for k in group.keys]
    return DuplicateGroup(
        type=group.of.kind,
        count=group.count,
        text=texts[0],
        variants=[t for t in texts[1 : 1 + VARIANTS] if t is not None],
        distinctTexts=len(group.keys),
        minSimilarity=_min_similarity(group.keys, cache),
        examples=group.of.examples(view, group.keys, EXAMPLES),
    )


def _min_similarity(keys: list[str], cache: GroupCache | str) -> float:
    if len(keys) < 2 or not isinstance(cache, GroupCache):
        return 1.0
    rows = [cache.vectors.rows[k] for k in keys]
    matrix = np.asarray(cache.vectors.matrix[rows], np.float32)
    return round(float(np.min(matrix[1:] @ matrix[0])), 4)


@dataclass
class Related:
    """`relatedCount` of search results: how many other current memories of a result's type
    share its duplicate group at the default threshold, over all sessions (a property of the
    memory, not of the search's filters). Counted once per group for one commit: the engine
    keeps one `Related` per generation and commit (`IndexReader.commit`)."""

    groups: GroupCache | str
    commit: bytes
    _counted: dict[tuple[str, int | str], int] = field(default_factory=dict)

    def counts(
        self, view: ReadView, docs: list[tantivy.Document], superseded: list[bool]
    ) -> list[int | None]:
        """Per step document (None for one without a text of its type)."""
        cache = self.groups
        grouping = cache.groups(DEFAULT_THRESHOLD) if isinstance(cache, GroupCache) else None
        out: list[int | None] = []
        for doc, flagged in zip(docs, superseded, strict=True):
            kind = next((k for k in doc["memory_type"] if k in STEP_KINDS), None)
            values = doc[KEY_FIELDS[kind]] if kind is not None else []
            if kind is None or not values or not values[0]:
                out.append(None)
                continue
            key = str(values[0])
            group, keys = grouping.group_of(key) if grouping else (key, [key])
            if (kind, group) not in self._counted:
                self._counted[kind, group] = _current(view, kind, keys)
            out.append(max(0, self._counted[kind, group] - (0 if flagged else 1)))
        return out


def _current(view: ReadView, kind: MemoryKind, keys: list[str]) -> int:
    """Current memories of `kind` with one of these texts (only step documents carry
    `memory_type` and the superseded flag: no doc_type clause needed)."""
    schema = view.schema
    memories = all_of(term(schema, "memory_type", kind), current_steps(schema))
    return count(view.searcher, all_of(memories, carrying(view, kind, keys)))
