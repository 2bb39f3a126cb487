"""Session context of steps (spec 002): `sourceSession` on results, timelines, step usage.

A step on its own says little; the session it came from (goal, flowTags, how long it was) and
the steps around it say how it was used. Everything here reads the index: a session's
metadata from its session document, its length from a count, neighbours by position in the
session (`seq`) or, across sessions, by time (`ts`). Timelines show history as it was, so
superseded steps appear in them, flagged.
"""

import tantivy

from engine.clauses import all_of, int_range, term
from engine.errors import NotFound
from engine.payload import read_payload
from engine.results import Result, SourceSession, StepSummary
from engine.rows import step_row
from engine.schema import DOC_STEP
from engine.sources import source_sessions

RECALLED_FIELD = "recalled"
"""Raw index field of an acting step: the step ids of the memories it followed (its record's
`recalled` links)."""
MAX_RECALLS_LISTED = 100
TIE_SLACK = 64
"""Extra neighbours read across sessions, so that steps sharing the anchor's millisecond are
ordered by step id like all others."""
FIRST_WINDOW_MS = 60_000
MAX_WINDOW_MS = 100 * 365 * 86_400_000
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
        up_to = _nearest_in_time(searcher, schema, anchor.ts, before, earlier=True)
        from_on = _nearest_in_time(searcher, schema, anchor.ts, after, earlier=False)
        earlier = sorted((h for h in up_to if h.order < anchor.order), key=lambda h: h.order)
        later = sorted((h for h in from_on if h.order > anchor.order), key=lambda h: h.order)
        earlier, later = earlier[len(earlier) - before :] if before else [], later[:after]
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
    searcher: tantivy.Searcher, schema: tantivy.Schema, ts: int, count: int, *, earlier: bool
) -> list[Hit]:
    """The `count` (+ `TIE_SLACK`) steps nearest in time at or before / at or after `ts`.

    Sorting every step before the anchor by time reads the whole index (70 ms at 100k), so the
    search starts in a one-minute window next to the anchor and widens it eightfold until it
    holds enough steps or reaches past every step: the nearest steps are found in the first
    window that holds enough of them, and they are the same as an unbounded search finds.
    """
    if count <= 0:
        return []
    step = term(schema, "doc_type", DOC_STEP)
    limit = count + TIE_SLACK
    width = FIRST_WINDOW_MS
    while True:
        last = width > MAX_WINDOW_MS
        if earlier:
            window = int_range(schema, "ts", None if last else ts - width, ts + 1)
        else:
            window = int_range(schema, "ts", ts, None if last else ts + width)
        order = tantivy.Order.Desc if earlier else tantivy.Order.Asc
        hits = _neighbours(searcher, all_of(step, window), limit, order)
        if len(hits) >= limit or last:
            return hits
        width *= 8


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
        Recall(sessionId=h.session_id, at=h.payload.get("timestamp", ""), stepId=h.step_id)
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
