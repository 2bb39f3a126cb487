"""`sourceSession` of result rows (spec 002's session context): the session a step came from.

Search and timeline rows carry it, read from the index: metadata from the session document,
the length counted (one query for the page's session documents, then a count per distinct
session of a page, not per row).
"""

from typing import Any

import orjson
import tantivy

from engine.clauses import all_of, count, one_of, term
from engine.results import SourceSession
from engine.schema import DOC_SESSION, DOC_STEP


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
    sessions = {}
    for session_id in ids:
        meta = metas.get(session_id, {})
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
