"""Session memories in search (`types: ["session"]`): the workflows that did what was asked.

A session is found by any of its memories — its steps and screens (words and meaning) and its
goal, flowTags and tags, which every step document carries — so a session search runs the step
search as usual (same modes, filters, fusion and exact tier) and ranks each session by its best
step. A result is the workflow memory: the session (goal, flowTags, length), the steps that
matched, and its recipe read from the index (the screens it went through and the actions that
worked, as `mm_knowledge_summarize` gives them).

`total` counts every session holding a match, not only those the ranked steps reach: the
keyword matches' sessions come from one aggregation over the `created` fast field (a session's
createdAt, shared by its steps), and the rare createdAt two sessions share is settled with a
count per such session. Sessions past the ranked steps follow, newest first, so pages stay
slices of one order.
"""

from collections import Counter
from collections.abc import Callable

import tantivy

from engine.core import RecipeAction, SessionMemory
from engine.history import SILENT_TOOLS
from engine.index import (
    DOC_SESSION,
    ResolvedTarget,
    StepPayload,
    all_of,
    count,
    counts_by,
    hit_count,
    int_range,
    known_actions,
    read_payload,
    term,
)
from engine.meaning import Hit
from engine.query import ReadView, source_sessions, step_filter
from engine.records import tool_action

SESSION_STEP_DEPTH = 300
"""Ranked steps a session search orders sessions by (past them: newest first)."""
MATCHED_STEPS = 3
"""Matching steps shown per session, best first."""
RECIPE_ACTIONS = 20
"""Actions shown per session recipe (its first ones; `summarize` gives them all)."""
RECIPE_STEPS = 200
"""A session's recipe is read from its first steps only (a row never grows with its session:
`truncated` says a longer session was cut, `summarize` pages through all of it)."""
RECIPE_SCREENS = 50
"""Screens shown per session recipe (the first ones its first steps went through)."""


def matching_sessions(
    view: ReadView, queries: list[tantivy.Query], semantic: list[Hit]
) -> dict[str, int]:
    """{session id: createdAt ms} of every session with a step matching one of the keyword
    `queries` or among the `semantic` hits."""
    created: set[int] = {hit.created for hit in semantic}
    for query in queries:
        created |= _created_values(view.searcher, query)
    if not created:
        return {}
    sessions = _sessions_created(view, created)
    shared = {ms for ms, n in Counter(sessions.values()).items() if n > 1}
    if shared:
        found = {hit.session_id for hit in semantic}
        for session_id in [s for s, ms in sessions.items() if ms in shared]:
            in_session = term(view.schema, "session_id", session_id)
            if session_id not in found and not any(
                count(view.searcher, all_of(query, in_session)) for query in queries
            ):
                del sessions[session_id]
    return sessions


def _created_values(searcher: tantivy.Searcher, query: tantivy.Query) -> set[int]:
    """The distinct `created` values of the documents `query` matches (columnar: no
    document is read)."""
    return set(counts_by(searcher, query, "created"))


def _sessions_created(view: ReadView, created: set[int]) -> dict[str, int]:
    """{session id: createdAt} of the session documents created at one of `created`."""
    query = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, term(view.schema, "doc_type", DOC_SESSION)),
            (
                tantivy.Occur.Must,
                tantivy.Query.term_set_query(view.schema, "created", sorted(created)),
            ),
        ]
    )
    found = view.searcher.search(query, limit=len(created), count=True)
    if hit_count(found) > len(found.hits):  # sessions sharing a createdAt
        found = view.searcher.search(query, limit=hit_count(found), count=False)
    out = {}
    for _, address in found.hits:
        doc = view.searcher.doc(address)
        out[str(doc["session_id"][0])] = int(doc["created"][0])
    return out


def session_order(ranked: list[Hit], matching: dict[str, int]) -> list[tuple[str, list[Hit]]]:
    """Sessions by their best step in `ranked`, each with its matching steps best first;
    then the matching sessions no ranked step reached, newest first (then by id)."""
    by_session: dict[str, list[Hit]] = {}
    for hit in ranked:
        by_session.setdefault(hit.session_id, []).append(hit)
    rest = sorted((s for s in matching if s not in by_session), key=lambda s: (-matching[s], s))
    return [*by_session.items(), *((s, []) for s in rest)]


def session_rows(
    view: ReadView, page: list[tuple[str, list[Hit]]], confidence: Callable[[Hit], float]
) -> list[SessionMemory]:
    """The result rows of a page of sessions: the session, its matching steps and its recipe;
    its confidence is its best step's (`confidence` of a hit)."""
    sessions = source_sessions(view.searcher, view.schema, {s for s, _ in page})
    rows = []
    for session_id, hits in page:
        best = hits[0] if hits else None
        steps = sessions[session_id].stepCount
        screens, actions = recipe(view, session_id, min(steps, RECIPE_STEPS))
        rows.append(
            SessionMemory(
                sessionId=session_id,
                session=sessions[session_id],
                score=round(best.score, 4) if best else 0.0,
                confidence=confidence(best) if best else 0.0,
                similarity=round(best.similarity, 4)
                if best and best.similarity is not None
                else None,
                matchType=best.match_type if best else "keyword",
                matchedSteps=[hit.step_id for hit in hits[:MATCHED_STEPS]],
                screens=screens[:RECIPE_SCREENS],
                actions=actions,
                truncated=steps > RECIPE_STEPS or len(screens) > RECIPE_SCREENS or None,
            )
        )
    return rows


def recipe(view: ReadView, session_id: str, first: int) -> tuple[list[str], list[RecipeAction]]:
    """The screens the session's `first` steps went through (consecutive repeats once) and
    its first actions that worked, from its step documents in order."""
    query = all_of(
        step_filter(view.schema),
        term(view.schema, "session_id", session_id),
        int_range(view.schema, "seq", 0, first),
    )
    found = view.searcher.search(query, limit=max(1, first), count=False, order_by_field="seq")
    steps = []
    for _, address in reversed(found.hits):  # order_by_field sorts descending
        doc = view.searcher.doc(address)
        steps.append((str(doc["step_id"][0]), read_payload(doc)))
    screens: list[str] = []
    for _, payload in steps:
        if not screens or screens[-1] != payload["screen"]:
            screens.append(payload["screen"])
    actions = [
        _recipe_action(step_id, action, index)
        for step_id, payload in steps
        for index, action in known_actions(payload)
        if action["ok"] and tool_action(action["tool"]) not in SILENT_TOOLS
    ]
    return screens, actions[:RECIPE_ACTIONS]


def _recipe_action(step_id: str, payload: StepPayload, batch_index: int | None) -> RecipeAction:
    resolved = ResolvedTarget.from_payload(payload.get("target") or {})
    return RecipeAction(
        stepId=step_id,
        tool=payload["tool"],
        screen=payload.get("onScreen") or payload["screen"],
        target=resolved.describe() or None,
        batchIndex=batch_index,
    )
