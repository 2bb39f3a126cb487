"""The memories that duplicates and clusters work on, counted by the text they carry.

Spec 004's memory types map onto our records: a `step` memory is an action step, its
text what it did (`sem_step`); a `screen` memory is a step that observed a screen, its text what
it saw (`sem_screen`); a `session` memory is a session, its text its goal and flowTags
(`sem_session`, carried by each of its steps). A memory without a text of its type (a step that
observed nothing) is in no group and no cluster.

A request's filters and the superseded rule are the search's
(`engine.query.filters.filter_clauses`): a session counts when one of its steps passes them. Counts
come from Tantivy's term dictionary restricted to the matching documents (deleted ones excluded), so
counting reads no document.
"""

from collections import defaultdict
from dataclasses import dataclass

import tantivy

from engine.core import KnowledgeFilters, MemoryKind
from engine.index import all_of, one_of, term
from engine.query import ReadView, filter_clauses

KINDS: tuple[MemoryKind, ...] = ("step", "screen", "session")
KEY_FIELDS: dict[MemoryKind, str] = {
    "step": "sem_step",
    "screen": "sem_screen",
    "session": "sem_session",
}


def matching(
    view: ReadView, kind: MemoryKind, filters: KnowledgeFilters | None, include_superseded: bool
) -> tantivy.Query:
    """The step documents whose memories of `kind` a request covers."""
    clauses = filter_clauses(
        view, "all", filters, steps=True, include_superseded=include_superseded
    )
    if kind != "session":
        clauses.append(term(view.schema, "memory_type", kind))
    return all_of(*clauses)


@dataclass(frozen=True, slots=True)
class Memories:
    """The memories of one type a request covers, counted by text."""

    kind: MemoryKind
    documents: tantivy.Query
    """The step documents they are (or, for sessions, that their sessions hold)."""
    counts: dict[str, int]
    """Memories per text key."""
    sessions: dict[str, list[str]]
    """For sessions: their ids per text key (those with most matching steps first)."""

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def examples(self, view: ReadView, keys: list[str], limit: int) -> list[str]:
        """Ids of a few memories with one of these texts: the newest steps, or the sessions
        with the most matching steps."""
        if self.kind == "session":
            return [s for key in keys for s in self.sessions.get(key, [])][:limit]
        query = all_of(self.documents, carrying(view, self.kind, keys))
        hits = view.searcher.search(query, limit=limit, count=False, order_by_field="ts").hits
        return [str(view.searcher.doc(address)["step_id"][0]) for _, address in hits]


def memories(
    view: ReadView, kind: MemoryKind, filters: KnowledgeFilters | None, include_superseded: bool
) -> Memories:
    """The memories of `kind` passing the filters (superseded steps hidden unless asked)."""
    clauses = filter_clauses(
        view, "all", filters, steps=True, include_superseded=include_superseded
    )
    if kind != "session":
        clauses.append(term(view.schema, "memory_type", kind))
        documents = all_of(*clauses)
        found = view.searcher.terms_with_prefix(KEY_FIELDS[kind], "", documents, None)
        return Memories(kind, documents, {key: n for key, n in found if key}, {})
    documents = all_of(*clauses)
    # A session's steps all carry its text: one step of each session says which.
    by_key: dict[str, list[str]] = defaultdict(list)
    for session_id, _ in view.searcher.terms_with_prefix("session_id", "", documents, None):
        one = all_of(documents, term(view.schema, "session_id", session_id))
        for _, address in view.searcher.search(one, limit=1, count=False).hits:
            values = view.searcher.doc(address)[KEY_FIELDS[kind]]
            if values and values[0]:
                by_key[str(values[0])].append(session_id)
    return Memories(kind, documents, {k: len(ids) for k, ids in by_key.items()}, dict(by_key))


def carrying(view: ReadView, kind: MemoryKind, keys: list[str]) -> tantivy.Query:
    """The documents whose memory of `kind` has one of these texts (a duplicate group's: a
    few). One term lookup per text (`clauses.one_of`): Tantivy's term-set query walks the
    field's dictionary into a bitset of every document, which costs each `relatedCount` of a
    group several times more (`scripts/bench_duplicates.py`)."""
    return one_of(view.schema, KEY_FIELDS[kind], keys)
