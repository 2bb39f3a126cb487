"""Session context of steps (spec 002): `sourceSession` on results, timelines, step usage.

A step on its own says little; the session it came from (goal, flowTags, how long it was) and
the steps around it say how it was used. Everything here reads the index: a session's
metadata from its session document, its length from a count, neighbours by position in the
session (`seq`) or, across sessions, by time (`ts`). Timelines show history as it was, so
superseded steps appear in them, flagged.
"""

from typing import Any

import tantivy

from engine.core import NotFound, Result, SourceSession, StepSummary
from engine.index import DOC_STEP, all_of, int_range, read_payload, term
from engine.query import source_sessions, step_row
from engine.records import DAY_MS, valid_time

RECALLED_FIELD = "recalled"
"""Raw index field of an acting step: the step ids of the memories it followed (its record's
`recalled` links)."""
MAX_RECALLS_LISTED = 100
TIE_SLACK = 4
"""Hits read past the `count` nearest (and the anchor), so that the millisecond holding the
last one kept is seldom the farthest of the hits, which would have to be read again whole."""
MAX_SAME_MS = 10_000
"""Steps read when many share one millisecond (ordered by step id among themselves)."""
FIRST_WINDOW_MS = 600_000
MAX_WINDOW_MS = 100 * 365 * DAY_MS
"""Past this window (a century) the search across sessions is unbounded."""


class Hit:
    """A step document as read from the index."""

    __slots__ = ("payload", "seq", "session_id", "step_id", "ts")

    def __init__(self, doc: tantivy.Document) -> None:
        self.step_id = str(doc["step_id"][0])
        self.session_id = str(doc["session_id"][0])
        self.ts = int(doc["ts"][0])
        self.seq = int(doc["seq"][0])
        self.payload = read_payload(doc)

    @property
    def order(self) -> tuple[int, str]:
        return (self.ts, self.step_id)


def find_step(searcher: tantivy.Searcher, schema: tantivy.Schema, step_id: str, field: str) -> Hit:
    """The indexed step `step_id`, or NotFound naming `field`."""
    query = all_of(term(schema, "doc_type", DOC_STEP), term(schema, "step_id", step_id))
    found = searcher.search(query, limit=1)
    if not found.hits:
        raise NotFound(f"{field}: no step {step_id!r} in the index; search to find step ids")
    return Hit(searcher.doc(found.hits[0][1]))


class TimelineResult(Result):
    anchor: StepSummary
    before: list[StepSummary]
    after: list[StepSummary]
    sessions: dict[str, SourceSession]
    """Every session that appears (goal, flowTags, createdAt, stepCount), by id."""


def timeline(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    anchor_id: str,
    before: int,
    after: int,
    scope: str,
) -> TimelineResult:
    """The anchor and its neighbours, oldest first: in its session by position (`session`),
    or across every session by time (`all`)."""
    anchor = find_step(searcher, schema, anchor_id, "anchor")
    if scope == "session":
        same = term(schema, "session_id", anchor.session_id)
        step = term(schema, "doc_type", DOC_STEP)
        earlier = _neighbours(
            searcher,
            all_of(step, same, int_range(schema, "seq", anchor.seq - before, anchor.seq)),
            before,
        )
        later = _neighbours(
            searcher,
            all_of(step, same, int_range(schema, "seq", anchor.seq + 1, anchor.seq + after + 1)),
            after,
        )
        earlier.sort(key=lambda h: h.seq)
        later.sort(key=lambda h: h.seq)
    else:
        earlier = _nearest_in_time(searcher, schema, anchor, before, earlier=True)[::-1]
        later = _nearest_in_time(searcher, schema, anchor, after, earlier=False)
    hits = [*earlier, anchor, *later]
    sessions = source_sessions(searcher, schema, {h.session_id for h in hits})

    def summary(hit: Hit) -> StepSummary:
        return step_row(
            hit.step_id,
            hit.session_id,
            hit.payload,
            session=sessions[hit.session_id],
            always_flag=True,
        )

    return TimelineResult(
        anchor=summary(anchor),
        before=[summary(h) for h in earlier],
        after=[summary(h) for h in later],
        sessions=sessions,
    )


def _nearest_in_time(
    searcher: tantivy.Searcher, schema: tantivy.Schema, anchor: Hit, count: int, *, earlier: bool
) -> list[Hit]:
    """The `count` steps nearest to the anchor in time, before it (`earlier`) or after it, in
    (ts, step id) order: nearest first.

    Sorting every step before the anchor by time reads the whole index, so the
    search starts in a ten-minute window next to the anchor (about a session's span) and
    widens it eightfold until it holds enough steps or reaches past every step. The searches
    return only times (the sort values); documents are read for the steps kept, a millisecond
    at a time (`_closest`): a timeline reads about as many documents as it returns, not ~140.
    """
    if count <= 0:
        return []
    step = term(schema, "doc_type", DOC_STEP)
    limit = count + 1 + TIE_SLACK  # the anchor is among them
    order = tantivy.Order.Desc if earlier else tantivy.Order.Asc
    width = FIRST_WINDOW_MS
    while True:
        last = width > MAX_WINDOW_MS
        if earlier:
            window = int_range(schema, "ts", None if last else anchor.ts - width, anchor.ts + 1)
        else:
            window = int_range(schema, "ts", anchor.ts, None if last else anchor.ts + width)
        hits = searcher.search(all_of(step, window), limit, order_by_field="ts", order=order).hits
        if len(hits) < limit and not last:
            width *= 8
            continue
        kept = _closest(searcher, schema, anchor, count, hits, len(hits) < limit, earlier)
        if len(kept) >= count or len(hits) < limit:
            return kept
        limit *= 2  # steps sharing the anchor's millisecond filled the hits: read further


def _closest(
    searcher: tantivy.Searcher,
    schema: tantivy.Schema,
    anchor: Hit,
    count: int,
    hits: list[tuple[Any, tantivy.DocAddress]],
    complete: bool,
    earlier: bool,
) -> list[Hit]:
    """The `count` nearest steps on one side of the anchor, from search hits ordered by time
    (nearest first). Steps sharing a millisecond are ordered by step id, so each millisecond is
    read whole: the farthest one of a full hit list may have been cut off by the limit, and is
    read again from the index then."""
    kept: list[Hit] = []
    by_time: dict[int, list[tantivy.DocAddress]] = {}
    for ts, address in hits:
        by_time.setdefault(int(ts), []).append(address)
    farthest = int(hits[-1][0]) if hits else None
    for ts, addresses in by_time.items():
        if ts == farthest and not complete:
            same = all_of(term(schema, "doc_type", DOC_STEP), int_range(schema, "ts", ts, ts + 1))
            addresses = [a for _, a in searcher.search(same, MAX_SAME_MS).hits]
        group = [Hit(searcher.doc(address)) for address in addresses]
        group = [
            h for h in group if (h.order < anchor.order) == earlier and h.order != anchor.order
        ]
        kept += sorted(group, key=lambda h: h.order, reverse=earlier)
        if len(kept) >= count:
            break
    return kept[:count]


def _neighbours(
    searcher: tantivy.Searcher,
    query: tantivy.Query,
    limit: int,
    order: tantivy.Order = tantivy.Order.Desc,
) -> list[Hit]:
    if limit <= 0:
        return []
    found = searcher.search(query, limit=limit, order_by_field="ts", order=order)
    return [Hit(searcher.doc(address)) for _, address in found.hits]


class Recall(Result):
    """One later session that acted on this step's advice, and it worked."""

    sessionId: str
    at: str
    stepId: str
    """The step of the recalling session that followed the advice."""


class StepContext(Result):
    """How a step came to be and how it was used since (`mm_knowledge_session_context`)."""

    stepId: str
    session: SourceSession
    stepCount: int
    usageType: str
    """`created` (nobody has followed it yet) or `recalled` (see `recalledBy`)."""
    recalledBy: list[Recall]


def recalls_of(searcher: tantivy.Searcher, schema: tantivy.Schema, step_id: str) -> list[Recall]:
    """The recall links to `step_id`, oldest first."""
    query = term(schema, RECALLED_FIELD, step_id)
    found = searcher.search(query, limit=MAX_RECALLS_LISTED, order_by_field="ts")
    hits = sorted((Hit(searcher.doc(address)) for _, address in found.hits), key=lambda h: h.order)
    return [
        Recall(
            sessionId=h.session_id,
            at=valid_time(h.payload.get("timestamp")) or "",
            stepId=h.step_id,
        )
        for h in hits
    ]


def step_context(searcher: tantivy.Searcher, schema: tantivy.Schema, step_id: str) -> StepContext:
    """The session that created `step_id`, its length, and the sessions that recalled it."""
    hit = find_step(searcher, schema, step_id, "stepId")
    recalls = recalls_of(searcher, schema, step_id)
    session = source_sessions(searcher, schema, {hit.session_id})[hit.session_id]
    return StepContext(
        stepId=step_id,
        session=session,
        stepCount=session.stepCount,
        usageType="recalled" if recalls else "created",
        recalledBy=recalls,
    )
