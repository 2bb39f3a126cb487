"""Listing without a query: the newest steps of a scope (`last`) and the sessions, newest first.

Both read the index only, ordered by a fast field (`ts`, `created`), with the same filters as
search (`engine.query.filters`).
"""

from collections import Counter
from typing import Any

import orjson
import tantivy

from engine.core import LastInput, SessionList, SessionsInput, SessionSummary, StepList
from engine.index import (
    DOC_SESSION,
    all_of,
    count,
    counts_by,
    hit_count,
    one_of,
    read_payload,
    term,
)
from engine.query import ReadView, filter_clauses, step_clauses, step_filter, step_row
from engine.records import epoch_ms


def last_steps(view: ReadView, request: LastInput) -> StepList:
    """The newest `n` steps of the scope, returned oldest first (like `tail`)."""
    must = step_clauses(view, request)
    found = view.searcher.search(all_of(*must), limit=request.n, count=True, order_by_field="ts")
    steps = []
    for _, address in found.hits:
        doc = view.searcher.doc(address)
        steps.append((int(doc["ts"][0]), doc["step_id"][0], doc))
    steps.sort(key=lambda s: (s[0], s[1]))
    rows = [step_row(step_id, doc["session_id"][0], read_payload(doc)) for _, step_id, doc in steps]
    return StepList(total=hit_count(found), steps=rows)


def session_list(view: ReadView, request: SessionsInput) -> SessionList:
    """Newest sessions first, with metadata and step counts."""
    must = filter_clauses(view, "all", request.filters, steps=False)
    return _sessions(view, all_of(*must), request.limit, 0)


def session_page(view: ReadView, offset: int, limit: int) -> SessionList:
    """Every session, newest first, `limit` of them from `offset` (a client pages through them
    all, as MCP's resource list does, where the sessions tool shows the newest only)."""
    return _sessions(view, term(view.schema, "doc_type", DOC_SESSION), limit, offset)


def one_session(view: ReadView, session_id: str) -> SessionSummary | None:
    """A session as the index lists it, or None when the index does not hold it."""
    schema = view.schema
    query = all_of(term(schema, "doc_type", DOC_SESSION), term(schema, "session_id", session_id))
    listed = _sessions(view, query, 1, 0).sessions
    return listed[0] if listed else None


def _sessions(view: ReadView, query: tantivy.Query, limit: int, offset: int) -> SessionList:
    found = view.searcher.search(
        query, limit=limit, count=True, order_by_field="created", offset=offset
    )
    docs = [view.searcher.doc(address) for _, address in found.hits]
    created = {str(doc["session_id"][0]): int(doc["created"][0]) for doc in docs}
    counts = _step_counts(view, created)
    listed = [_session_summary(orjson.loads(doc["payload"][0]), counts) for doc in docs]
    listed.sort(key=lambda s: (-epoch_ms(s.createdAt), s.sessionId))
    return SessionList(total=hit_count(found), sessions=listed)


def _step_counts(view: ReadView, created: dict[str, int]) -> dict[str, tuple[int, int]]:
    """(steps, failed steps) of each listed session (session id -> its `created`): two
    aggregations over the steps of all of them, bucketed by their sessions' `created` (a fast
    field; `session_id` is not one), instead of two counts per session. Sessions sharing a
    createdAt share a bucket: only those are counted one by one."""
    if not created:
        return {}
    schema, searcher = view.schema, view.searcher
    steps = all_of(one_of(schema, "session_id", sorted(created)), step_filter(schema))
    failed = all_of(steps, term(schema, "ok", "false"))
    totals, failures = counts_by(searcher, steps, "created"), counts_by(searcher, failed, "created")
    shared = {ms for ms, n in Counter(created.values()).items() if n > 1}
    out = {}
    for session_id, ms in created.items():
        if ms in shared:
            own = all_of(term(schema, "session_id", session_id), step_filter(schema))
            own_failed = all_of(own, term(schema, "ok", "false"))
            out[session_id] = (count(searcher, own), count(searcher, own_failed))
        else:
            out[session_id] = (totals.get(ms, 0), failures.get(ms, 0))
    return out


def _session_summary(meta: dict[str, Any], counts: dict[str, tuple[int, int]]) -> SessionSummary:
    steps, failed = counts[meta["sessionId"]]
    return SessionSummary(
        sessionId=meta["sessionId"],
        createdAt=meta.get("createdAt", ""),
        goal=meta.get("goal"),
        flowTags=meta.get("flowTags", []),
        tags=meta.get("tags", []),
        git=meta.get("git"),
        stepCount=steps,
        failedStepCount=failed,
        hasMetadata=meta.get("hasMetadata", True),
        stateMode=_launched(meta, "stateMode"),
        fixturePreset=_launched(meta, "fixturePreset"),
    )


def _launched(meta: dict[str, Any], key: str) -> str | None:
    """A text value of the session's `launch` (`SessionMetadata.launched`, from its payload)."""
    launch = meta.get("launch")
    value = launch.get(key) if isinstance(launch, dict) else None
    return value if isinstance(value, str) and value else None


def newest_session_id(searcher: tantivy.Searcher, schema: tantivy.Schema) -> str | None:
    """The most recently created session, which scope "current" means by default in the CLI."""
    found = searcher.search(
        term(schema, "doc_type", DOC_SESSION), limit=1, order_by_field="created"
    )
    if not found.hits:
        return None
    return str(searcher.doc(found.hits[0][1])["session_id"][0])
