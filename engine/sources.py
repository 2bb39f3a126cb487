"""`sourceSession` of result rows (spec 002's session context): the session a step came from.

Search and timeline rows carry it, read from the index: metadata from the session document,
the length counted (two small queries per distinct session of a page, not per row).
"""

import orjson
import tantivy

from engine.clauses import all_of, count, term
from engine.results import SourceSession
from engine.schema import DOC_SESSION, DOC_STEP


def source_sessions(
    searcher: tantivy.Searcher, schema: tantivy.Schema, session_ids: set[str]
) -> dict[str, SourceSession]:
    """`sourceSession` of each session: metadata from its session document, length counted."""
    sessions = {}
    for session_id in sorted(session_ids):
        query = all_of(
            term(schema, "doc_type", DOC_SESSION), term(schema, "session_id", session_id)
        )
        found = searcher.search(query, limit=1)
        meta = orjson.loads(searcher.doc(found.hits[0][1])["payload"][0]) if found.hits else {}
        steps = count(
            searcher,
            all_of(term(schema, "doc_type", DOC_STEP), term(schema, "session_id", session_id)),
        )
        sessions[session_id] = SourceSession(
            id=session_id,
            createdAt=meta.get("createdAt", ""),
            goal=meta.get("goal"),
            flowTags=meta.get("flowTags", []),
            stepCount=steps,
        )
    return sessions
