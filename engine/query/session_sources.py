"""`sourceSession` of result rows (spec 002's session context): the session a step came from.

Search and timeline rows carry it, read from the index: metadata from the session document
(one query for the page's session documents), the length counted per distinct session of a
page, not per row: from the term's document frequency when the index holds no deleted
document (then it is exact), else by a count query.
"""

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import tantivy

from engine.core import SourceSession
from engine.index import DOC_SESSION, DOC_STEP, all_of, count, one_of, term

MAX_KEPT_SESSIONS = 4_096
"""Sessions whose `sourceSession` one commit's `SessionSources` keeps (then it starts over)."""


@dataclass
class SessionSources:
    """The `sourceSession`s read for one commit of a generation, kept for the next searches on
    it: a session's metadata and length change only with a commit (the engine keeps one of
    these per generation and commit, as it keeps `duplicates.Related`). Reading a page's sessions
    again would cost a query, their documents and a count each."""

    commit: tuple[Path, bytes]
    _known: dict[str, SourceSession] = field(default_factory=dict)

    def of(
        self, searcher: tantivy.Searcher, schema: tantivy.Schema, session_ids: set[str]
    ) -> dict[str, SourceSession]:
        """`source_sessions` of these sessions, read only for those not read before."""
        missing = session_ids.difference(self._known)
        if missing:
            if len(self._known) + len(missing) > MAX_KEPT_SESSIONS:
                self._known.clear()
            self._known.update(source_sessions(searcher, schema, missing))
        return {session_id: self._known[session_id] for session_id in session_ids}


def source_sessions(
    searcher: tantivy.Searcher, schema: tantivy.Schema, session_ids: set[str]
) -> dict[str, SourceSession]:
    """`sourceSession` of each session: metadata from its session document (one query for
    all of them), length counted."""
    if not session_ids:
        return {}
    ids = sorted(session_ids)
    query = all_of(
        term(schema, "doc_type", DOC_SESSION),
        one_of(schema, "session_id", ids),
    )
    metas: dict[str, dict[str, Any]] = {}
    for _, address in searcher.search(query, limit=len(ids), count=False).hits:
        doc = searcher.doc(address)
        metas.setdefault(str(doc["session_id"][0]), orjson.loads(doc["payload"][0]))
    exact_frequencies = _nothing_deleted(searcher)
    sessions = {}
    for session_id in ids:
        meta = metas.get(session_id)
        if exact_frequencies and meta is not None:
            # Its documents are its steps and its one session document.
            steps = searcher.doc_freq("session_id", session_id) - 1
        else:
            steps = count(
                searcher,
                all_of(term(schema, "doc_type", DOC_STEP), term(schema, "session_id", session_id)),
            )
        meta = meta or {}
        sessions[session_id] = SourceSession(
            id=session_id,
            createdAt=meta.get("createdAt", ""),
            goal=meta.get("goal"),
            flowTags=meta.get("flowTags", []),
            stepCount=steps,
        )
    return sessions


def _nothing_deleted(searcher: tantivy.Searcher) -> bool:
    """Whether the searcher's segments hold no deleted document: a term's document frequency
    counts deleted documents too (until a merge drops them), and every document carries its
    `doc_type`, so these frequencies add up to the live count exactly when none is deleted."""
    held = searcher.doc_freq("doc_type", DOC_STEP) + searcher.doc_freq("doc_type", DOC_SESSION)
    return held == searcher.num_docs
