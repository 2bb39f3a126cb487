"""priorKnowledge: "what worked last time on this screen" (SPEC-02/SPEC-04, PriorKnowledgeV1).

Drawn from ALL history through the index (no 48-hour or 5-session window): steps taken *on*
this screen (the index records the screen an action was taken on, not the one it led to) or on
elements visible now. Each candidate gets SPEC-04's similarity (same screen 8 — never for
`unknown` —, URL path overlap 6, its target visible now 3, shared a11y names 2 each up to 2,
actionable tool 2; confidence = score / 20), weighted by outcome and by its session's age.
Successful steps are grouped into one suggestion per element and action (however each session
named the element), ranked by support — what worked in two or more sessions before what worked
in one — then by summed weight, in the order sessions used them together (a form reads top to
bottom), with a confidence never higher further down; those whose target cannot be used
now (`engine.history.screen_now`: not shown, shown only disabled, behind an open dialog) are
`laterActions`, the others the suggestions, the surely usable first. A suggestion's preferred
target is a testId visible now, else — when the remembered testId is gone (renamed) — the
element with the same role and name, else the selector, else the role and name; targets that
failed at least twice on this screen are listed in `avoid`.

The actions of a batch step (`run_steps`) are candidates each, with their position in the
batch, when the batch's outcome tells theirs: those of a batch that worked are suggested like any
step's, a failed batch's are neither suggested nor avoided (its record does not say which of them
failed), unless it held one action. Set-up tools (`mock_network`, `seed_contract`, …) are never
actions to suggest.

Superseded steps (`engine.query.superseded_rule`) are never candidates, so an old testId that was
renamed is never a preferred target. What the current session already did on this screen in
this visit (its steps since it last arrived here) is not suggested again as a next action.
"""

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import tantivy

from engine.core import Caution, Result
from engine.history.caution import caution_for
from engine.history.screen_now import (
    ScreenContext,
    Usable,
    selector_test_id,
    selector_text,
    usability,
)
from engine.index import (
    DOC_STEP,
    PayloadError,
    PayloadTarget,
    StepPayload,
    known_actions,
    one_of,
    read_payload,
    route_of,
    term,
    value_tokens,
)
from engine.query import describe_target, hide_superseded
from engine.records import (
    DAY_MS,
    INTERACTION_TOOLS,
    NAVIGATION_TOOLS,
    UNKNOWN,
    epoch_ms,
    now_iso,
    tool_action,
    valid_time,
    words,
)

SIMILARITY = {"sameScreen": 8, "urlPath": 6, "targetVisible": 3, "a11yName": 2, "actionable": 2}
MAX_A11Y_MATCHES = 2
CANDIDATES = 100
MAX_SIMILAR = 10
MAX_SUGGESTIONS = 5
MIN_SESSIONS = 2
"""Sessions an action must have worked in to rank above every action of a single session."""
FLOW_ORDERED = 20
"""How many of the best elements are put in the flow's order (`_ranked`)."""
MAX_AVOID = 5
MIN_FAILURES_TO_AVOID = 2
HALF_LIFE_DAYS = 30.0
"""Older knowledge counts less (UI churn): weight halves every 30 days."""
ACTIONABLE = sorted(INTERACTION_TOOLS | NAVIGATION_TOOLS)
VISIT_LOOKBACK = 50
"""How many of the current session's latest steps are read to find what it did in this visit."""


ActionTarget = dict[str, str | dict[str, str]]
"""A target as the action tools take it: `{"testId": …}`, `{"selector": …}` or
`{"a11yHint": {"role": …, "name": …}}`."""


class PriorTarget(Result):
    type: str  # testId | selector | a11yHint
    value: str | dict[str, str]

    def as_arguments(self) -> ActionTarget:
        return {self.type: self.value}


class SimilarStep(Result):
    sessionId: str
    stepId: str
    timestamp: str
    tool: str
    screen: str
    snippet: str
    labels: list[str] = field(default_factory=list)
    target: dict[str, str] | None = None
    a11yHint: dict[str, str] | None = None
    confidence: float
    batchIndex: int | None = None
    """The action's position in its batch, when the step is a batch (`run_steps`)."""


class Support(Result):
    """How much history stands behind a suggestion."""

    times: int
    """Steps that did it and worked."""
    sessions: int
    """Sessions those steps come from: what ranks suggestions (one session repeating an
    action is one voice)."""
    lastUsed: str | None = None
    """When it last worked (an ISO-8601 time; None when the step's recorded time is not one)."""


class SuggestedAction(Result):
    rank: int
    stepId: str
    """The step this suggestion is drawn from (followed and working, it counts as a recall)."""
    action: str
    rationale: str
    """knowhow's own words (numbers, never recorded text: that is in the data fields)."""
    confidence: float
    support: Support
    target: ActionTarget
    """Where to act, in the shape mm_click, mm_type and mm_wait_for take: pass it on as it is."""
    fallbacks: list[ActionTarget] = field(default_factory=list)
    """Other ways to the same element, best first, in the same shape."""
    preferredTarget: PriorTarget
    """`target` as `{type, value}`: kept one more release for the agents that read it."""
    fallbackTargets: list[PriorTarget] = field(default_factory=list)
    """`fallbacks` as `{type, value}`, kept as preferredTarget is."""
    batchIndex: int | None = None
    """The action's position in the batch `stepId`, when that step is a batch."""
    caution: Caution | None = None
    """Why to look twice before acting on it; a cautioned suggestion is never the first."""


class AvoidTarget(Result):
    rationale: str
    target: ActionTarget
    """In the shape the action tools take, as a suggestion's `target` is."""
    errorCode: str | None = None
    frequency: int


class PriorKnowledge(Result):
    schemaVersion: int = 1
    generatedAt: str
    query: dict[str, Any]
    similarSteps: list[SimilarStep]
    suggestedNextActions: list[SuggestedAction]
    """What worked here whose target can be followed now (or cannot be told: a selector)."""
    avoid: list[AvoidTarget]
    laterActions: list[SuggestedAction] = field(default_factory=list)
    """What worked here whose target cannot be used now: not shown, shown only disabled, or
    behind an open dialog (the steps before it may change that: a form's Confirm is enabled by
    filling the form). Same shape as `suggestedNextActions`."""


@dataclass
class _Candidate:
    step_id: str
    session_id: str
    seq: int
    """Position of the step in its session."""
    batch_index: int | None
    """Position of the action in its batch (None: the step is not a batch)."""
    payload: StepPayload
    """The action's: the step's own, or one of a batch's (`engine.index.action_views`)."""
    confidence: float
    weight: float

    @property
    def order(self) -> tuple[int, int]:
        """When it was taken in its session."""
        return self.seq, self.batch_index or 0


def _retrieval_query(schema: tantivy.Schema, context: ScreenContext) -> tantivy.Query:
    """Steps on this screen, or on elements visible now, by an actionable tool."""
    # Constant scores mirror the similarity weights, so the best candidates come first.
    should: list[tuple[tantivy.Occur, tantivy.Query]] = []

    def add(query: tantivy.Query, weight: int) -> None:
        should.append((tantivy.Occur.Should, tantivy.Query.const_score_query(query, weight)))

    if context.screen and context.screen != UNKNOWN:
        add(term(schema, "screen_name", context.screen.lower()), SIMILARITY["sameScreen"])
    for test_id in dict.fromkeys(t.lower() for t in context.test_ids):
        add(term(schema, "target_id", test_id), SIMILARITY["targetVisible"])
    for token in dict.fromkeys(t for _, name in context.a11y for t in value_tokens(name)):
        name_query = tantivy.Query.term_query(schema, "target_name", token, "freq")
        add(name_query, SIMILARITY["a11yName"])
    if not should:
        return tantivy.Query.empty_query()
    clauses = [
        (tantivy.Occur.Must, term(schema, "doc_type", DOC_STEP)),
        (tantivy.Occur.Must, one_of(schema, "tool_name", ACTIONABLE)),
        (tantivy.Occur.Must, tantivy.Query.boolean_query(should)),
        hide_superseded(schema),
    ]
    if context.session_id:
        clauses.append((tantivy.Occur.MustNot, term(schema, "session_id", context.session_id)))
    return tantivy.Query.boolean_query(clauses)


def _failures_query(schema: tantivy.Schema, context: ScreenContext) -> tantivy.Query:
    """Failed actions on this screen in every session, the current one included: a renamed
    testId that this agent just failed on twice belongs in `avoid` too."""
    if not context.screen or context.screen == UNKNOWN:
        return tantivy.Query.empty_query()
    return tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, term(schema, "doc_type", DOC_STEP)),
            (tantivy.Occur.Must, term(schema, "ok", "false")),
            (tantivy.Occur.Must, term(schema, "screen_name", context.screen.lower())),
            hide_superseded(schema),
        ]
    )


def done_in_this_visit(
    searcher: tantivy.Searcher, schema: tantivy.Schema, context: ScreenContext
) -> set[tuple[str, str]]:
    """(action, target key) of what the current session did on this screen since it last
    arrived here: its newest steps, back to the first one taken on another screen."""
    if not context.session_id:
        return set()
    query = tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Must, term(schema, "doc_type", DOC_STEP)),
            (tantivy.Occur.Must, term(schema, "session_id", context.session_id)),
        ]
    )
    found = searcher.search(query, limit=VISIT_LOOKBACK, order_by_field="seq")
    done: set[tuple[str, str]] = set()
    for _, address in found.hits:
        for index, view in known_actions(read_payload(searcher.doc(address)))[::-1]:
            screen = view.get("onScreen") or view.get("screen")
            if index is not None and screen == UNKNOWN:
                continue  # an action of a batch taken where the record cannot tell
            if screen != context.screen:
                return done
            if view.get("ok"):
                action = tool_action(view.get("tool", ""))
                done.update((action, key) for key in _element_keys(view.get("target") or {}))
    return done


def _element_keys(target: PayloadTarget) -> set[str]:
    """Every name of the element: its target key, and its role and name when known (the same
    field typed into by testId in one step and by a11y ref in another is one element)."""
    keys = {key} if (key := _target_key(target)) else set()
    if target.get("role") and target.get("name"):
        keys.add(f"a11y:{target['role']}:{target['name']}")
    return keys


@dataclass(frozen=True)
class _Now:
    """The context as sets, computed once per call."""

    screen: str
    routes: frozenset[str]
    test_ids: frozenset[str]
    names: frozenset[str]

    @classmethod
    def of(cls, context: ScreenContext) -> "_Now":
        return cls(
            context.screen,
            frozenset(route_of(context.url).split()),
            frozenset(context.test_ids),
            frozenset(name.lower() for _, name in context.a11y if name),
        )


def _similarity(payload: StepPayload, now: _Now) -> int:
    score = 0
    screen = payload.get("onScreen") or payload.get("screen")
    if screen == now.screen and screen != UNKNOWN:
        score += SIMILARITY["sameScreen"]
    if now.routes and not now.routes.isdisjoint(route_of(payload.get("url")).split()):
        score += SIMILARITY["urlPath"]
    target = payload.get("target") or {}
    if target.get("testId") in now.test_ids:
        score += SIMILARITY["targetVisible"]
    names_now = now.names
    names_then = {str(name).lower() for _, name in payload.get("a11y") or [] if name}
    if target.get("name"):
        names_then.add(str(target["name"]).lower())
    score += SIMILARITY["a11yName"] * min(MAX_A11Y_MATCHES, len(names_now & names_then))
    if tool_action(payload.get("tool", "")) in ACTIONABLE:
        score += SIMILARITY["actionable"]
    return score


def _age_weight(created_ms: int, now_ms: int) -> float:
    """By the session's age: the UI an agent saw is a property of when its session ran, and
    the seconds between two steps of one session must not reorder them."""
    age_days = max(0.0, (now_ms - created_ms) / DAY_MS)
    return float(0.5 ** (age_days / HALF_LIFE_DAYS))


def _target_key(target: PayloadTarget) -> str | None:
    if target.get("testId"):
        return f"testId:{target['testId']}"
    if target.get("selector"):
        return f"selector:{target['selector']}"
    if target.get("role") and target.get("name"):
        return f"a11y:{target['role']}:{target['name']}"
    return None


def _hint(target: PayloadTarget) -> dict[str, str] | None:
    if target.get("role") and target.get("name"):
        return {"role": str(target["role"]), "name": str(target["name"])}
    return None


def preferred_target(target: PayloadTarget, context: ScreenContext) -> list[PriorTarget]:
    """Targets to try, best first: a testId visible now (remembered as one, or as a selector
    naming only it); the element with the same role and name (when the remembered testId is
    gone); the selector; the role and name."""
    visible = set(context.test_ids)
    now = {(role, name) for role, name in context.a11y}
    hint = _hint(target)
    options: list[PriorTarget] = []
    test_id = target.get("testId") or selector_test_id(str(target.get("selector") or ""))
    if test_id and test_id in visible:
        options.append(PriorTarget(type="testId", value=test_id))
    if hint and (hint["role"], hint["name"]) in now:
        options.append(PriorTarget(type="a11yHint", value=hint))
    if target.get("selector"):
        options.append(PriorTarget(type="selector", value=target["selector"]))
    if hint and not any(o.type == "a11yHint" for o in options):
        options.append(PriorTarget(type="a11yHint", value=hint))
    if target.get("testId") and target["testId"] not in visible:
        options.append(PriorTarget(type="testId", value=target["testId"]))
    return options


def prior_knowledge(
    searcher: tantivy.Searcher, schema: tantivy.Schema, context: ScreenContext, now: datetime
) -> PriorKnowledge:
    now_ms = int(now.timestamp() * 1000)
    seen_now = _Now.of(context)

    def load(query: tantivy.Query, keep: Callable[[StepPayload], bool]) -> list[_Candidate]:
        """The actions of the steps `query` finds that `keep` keeps (a batch's, each)."""
        loaded = []
        for _, address in searcher.search(query, limit=CANDIDATES).hits:
            doc = searcher.doc(address)
            step_id, session_id = doc["step_id"][0], doc["session_id"][0]
            seq, created = int(doc["seq"][0]), int(doc["created"][0])
            for index, payload in known_actions(read_payload(doc)):
                if index is not None and not keep(payload):
                    continue
                confidence = min(1.0, _similarity(payload, seen_now) / 20)
                age = _age_weight(created or epoch_ms(payload.get("timestamp")), now_ms)
                loaded.append(
                    _Candidate(
                        step_id, session_id, seq, index, payload, confidence, confidence * age
                    )
                )
        return loaded

    def actionable(payload: StepPayload) -> bool:
        return tool_action(payload["tool"]) in ACTIONABLE

    def failed_here(payload: StepPayload) -> bool:
        return not payload["ok"] and payload["onScreen"] == context.screen

    # The queries choose steps; of a batch they found, only its actions that qualify count.
    candidates = load(_retrieval_query(schema, context), actionable)
    failures = load(_failures_query(schema, context), failed_here)
    worked = [c for c in candidates if c.payload.get("ok")]
    worked.sort(key=lambda c: (-c.weight, -epoch_ms(c.payload.get("timestamp")), c.step_id))
    suggested, later = _suggestions(worked, context, done_in_this_visit(searcher, schema, context))
    return PriorKnowledge(
        generatedAt=now_iso(),
        query={
            "screen": context.screen,
            "usedFlowTags": list(context.flow_tags),
            "windowHours": None,
            "candidateSteps": len(candidates),
            "excludedSession": context.session_id,
        },
        similarSteps=[_similar(c) for c in worked[:MAX_SIMILAR]],
        suggestedNextActions=suggested,
        avoid=_avoid(failures),
        laterActions=later,
    )


def _similar(candidate: _Candidate) -> SimilarStep:
    payload = candidate.payload
    target = payload.get("target") or {}
    return SimilarStep(
        sessionId=candidate.session_id,
        stepId=candidate.step_id,
        timestamp=valid_time(payload.get("timestamp")) or "",
        tool=payload.get("tool", ""),
        screen=payload.get("onScreen") or payload.get("screen") or UNKNOWN,
        snippet=describe_target(target) or payload.get("tool", ""),
        labels=payload.get("labels") or [],
        target={k: v for k, v in target.items() if k in ("testId", "selector")} or None,
        a11yHint=_hint(target),
        confidence=round(candidate.confidence, 3),
        batchIndex=candidate.batch_index,
    )


def _suggestions(
    worked: list[_Candidate], context: ScreenContext, done: set[tuple[str, str]]
) -> tuple[list[SuggestedAction], list[SuggestedAction]]:
    """What to do next and what to do later (`PriorKnowledge.laterActions`): one suggestion
    per element and action (`_elements`), elements this visit already acted on (`done`) left
    out, ranked by `_ranked`."""
    fresh = [
        c
        for c in worked
        if _target_key(c.payload.get("target") or {}) is not None
        and not any(
            (tool_action(c.payload.get("tool", "")), key) in done
            for key in _element_keys(c.payload.get("target") or {})
        )
    ]
    shown_now = dict(context.texts)
    built = []
    for action, members in _ranked(_elements(fresh, context)):
        target = _merged_target(members, context)
        targets = preferred_target(target, context)
        if targets:
            caution = caution_for(target, context.goal, shown_now, _danger(members))
            built.append((action, members, targets, caution))
    # What can be followed now is suggested (`engine.history.screen_now`): first what is
    # known to be usable, then what cannot be told (a selector); a target not shown, shown
    # only disabled or behind an open dialog is a later action (the steps before it may make
    # it usable). Among equally usable ones a cautioned target comes last, and it is never the
    # first suggestion while another is made.
    usable = usability(context)
    levels = [(usable(b[2][0].type, b[2][0].value), b[3] is not None, b) for b in built]
    levels.sort(key=lambda level: level[:2])
    now = [b for level, _, b in levels if level is not Usable.NO]
    later = [b for level, _, b in levels if level is Usable.NO]
    if now:
        now.insert(0, now.pop(next((i for i, b in enumerate(now) if b[3] is None), 0)))
    return _numbered(now[:MAX_SUGGESTIONS]), _numbered(later[:MAX_SUGGESTIONS])


Built = tuple[str, list[_Candidate], list[PriorTarget], Caution | None]
"""(action, the candidates behind it, its targets best first, its caution)."""


def _numbered(built: list[Built]) -> list[SuggestedAction]:
    """The suggestions in order, ranked from 1; a suggestion's confidence is never higher
    than the one before it (what comes first is what to trust first)."""
    suggestions: list[SuggestedAction] = []
    for rank, b in enumerate(built, 1):
        suggestion = _suggested(rank, *b)
        if suggestions and suggestion.confidence > suggestions[-1].confidence:
            suggestion.confidence = suggestions[-1].confidence
        suggestions.append(suggestion)
    return suggestions


Group = tuple[str, list[_Candidate], set[str]]
"""(action, candidates, every name of the element: `_element_names`)."""
Named = dict[tuple[str, str], Group]
"""(action, a name of an element) -> the group holding it."""


def _element_names(target: PayloadTarget, shown: dict[str, str]) -> set[str]:
    """Every way `target` names its element: `_element_keys`, the testId a selector names,
    and the visible name (its own, a selector's `has-text`, or the text its testId shows now)."""
    keys = _element_keys(target)
    test_id = target.get("testId") or selector_test_id(str(target.get("selector") or ""))
    if test_id:
        keys.add(f"testId:{test_id}")
    names = {target.get("name"), selector_text(str(target.get("selector") or ""))}
    names.add(shown.get(test_id or ""))
    keys |= {f"name:{name.strip().lower()}" for name in names if name and name.strip()}
    return keys


def _elements(
    worked: list[_Candidate], context: ScreenContext
) -> list[tuple[str, list[_Candidate]]]:
    """The candidates grouped by action and element, in the order of `worked` (best first): two
    targets are one element when they share a testId, a role and name, or a visible name (the
    text a testId shows now, a selector's `has-text`) and no two testIds, or when a field known
    only by its testId and one known only by its name are the only pair of this action whose
    words agree (`unlock-password` and the textbox "Password": a field's testId shows no
    text)."""
    groups: list[Group] = []
    named: Named = {}
    shown = dict(context.texts)
    for candidate in worked:
        action = tool_action(candidate.payload.get("tool", ""))
        names = _element_names(candidate.payload.get("target") or {}, shown)
        found = {id(g): g for n in names if (g := named.get((action, n))) is not None}
        joined = [g for g in found.values() if _same_element(g[2], names)]
        group: Group = joined[0] if joined else (action, [], set())
        if not joined:
            groups.append(group)
        for other in joined[1:]:
            if _same_element(group[2], other[2]):
                _join(group, other, groups, named)
        group[1].append(candidate)
        group[2].update(names)
        named.update({(action, n): group for n in names})
    _pair_fields(groups, named)
    position = {id(c): n for n, c in enumerate(worked)}
    return [
        (action, sorted(members, key=lambda c: position[id(c)])) for action, members, _ in groups
    ]


def _join(
    group: Group, other: Group, groups: list[Group], named: dict[tuple[str, str], Group]
) -> None:
    """`other`'s candidates and names into `group`."""
    group[1].extend(other[1])
    group[2].update(other[2])
    named.update({(group[0], n): group for n in other[2]})
    groups.remove(other)


def _same_element(names: set[str], others: set[str]) -> bool:
    """Whether two sets of names name one element: they share one, and do not hold two
    different testIds (two testIds are two elements, whatever they are called: a trap named
    "Send" is not the Send button)."""
    ids, other_ids = (
        {n for n in names if n.startswith("testId:")},
        {n for n in others if n.startswith("testId:")},
    )
    return not names.isdisjoint(others) and (not ids or not other_ids or ids == other_ids)


def _pair_fields(groups: list[Group], named: Named) -> None:
    """Join a group known without a visible name (a testId) with one known without a testId, of
    the same action, when the name's words are all words of the testId and neither has another
    such partner."""
    by_id = [(g, _keyed(g, "testId")) for g in groups if not _keyed(g, "name")]
    by_name = [(g, _keyed(g, "name")) for g in groups if not _keyed(g, "testId")]
    pairs = [
        (id_group, name_group)
        for id_group, test_ids in by_id
        if test_ids
        for name_group, names in by_name
        if id_group[0] == name_group[0]
        and any(
            words(name) and words(name) <= words(test_id) for test_id in test_ids for name in names
        )
    ]
    for id_group, name_group in pairs:
        if sum(1 for a, b in pairs if a is id_group or b is name_group) == 1:
            _join(id_group, name_group, groups, named)


def _keyed(group: Group, kind: str) -> list[str]:
    """The values of a group's names of one kind (`testId`, `name`)."""
    return [key.split(":", 1)[1] for key in group[2] if key.startswith(kind + ":")]


def _merged_target(members: list[_Candidate], context: ScreenContext) -> PayloadTarget:
    """One target for an element remembered in several ways: a testId (one shown now when
    there is one, else the most used), a selector, and a role and name, from its members."""
    targets = [m.payload.get("target") or {} for m in members]
    ids = [t.get("testId") or selector_test_id(str(t.get("selector") or "")) for t in targets]
    counted = Counter(i for i in ids if i)
    shown = [i for i, _ in counted.most_common() if i in context.test_ids]
    merged: PayloadTarget = {}
    if counted:
        merged["testId"] = shown[0] if shown else counted.most_common(1)[0][0]
    selector = next((t["selector"] for t in targets if t.get("selector")), None)
    if selector:
        merged["selector"] = selector
    named = next((t for t in targets if t.get("role") and t.get("name")), None)
    if named:
        merged["role"], merged["name"] = named["role"], named["name"]
    return merged


def _ranked(
    elements: list[tuple[str, list[_Candidate]]],
) -> list[tuple[str, list[_Candidate]]]:
    """Elements best first. What worked in `MIN_SESSIONS` sessions or more comes before what
    worked in one, whatever its age or similarity: a single recording (forged, or an agent's
    mistake) cannot outrank what several agents did. Then by summed session weight (`support
    is counted in sessions: one session repeating an action is one voice), then by sessions.
    Last, the flow's order: an element the sessions that used both acted on before another
    (type the password, then click Unlock) is moved before it, unless it worked in fewer
    sessions than `MIN_SESSIONS` while the other did not."""
    ordered = sorted(
        elements,
        key=lambda e: (
            -_established(e[1]),
            -round(_session_weight(e[1]), 9),
            -len({c.session_id for c in e[1]}),
            min(c.order for c in e[1]),
        ),
    )
    head, tail = ordered[:FLOW_ORDERED], ordered[FLOW_ORDERED:]
    firsts = [_first_uses(members) for _, members in head]
    standing = [_established(members) for _, members in head]

    def goes_before(a: int, b: int) -> bool:
        """Whether the sessions that used both did `a` first, more often than not."""
        shared = firsts[a].keys() & firsts[b].keys()
        earlier = sum(1 for s in shared if firsts[a][s] < firsts[b][s])
        return standing[a] >= standing[b] and earlier * 2 > len(shared) > 0

    before = {
        (a, b) for a in range(len(head)) for b in range(len(head)) if a != b and goes_before(a, b)
    }
    left, result = list(range(len(head))), []
    while left:
        free = [i for i in left if not any((j, i) in before for j in left)]
        pick = free[0] if free else left[0]
        result.append(head[pick])
        left.remove(pick)
    return result + tail


def _first_uses(members: list[_Candidate]) -> dict[str, tuple[int, int]]:
    """Per session, when it first acted on the element."""
    first: dict[str, tuple[int, int]] = {}
    for m in members:
        first[m.session_id] = min(first.get(m.session_id, m.order), m.order)
    return first


def _established(members: list[_Candidate]) -> bool:
    """Whether it worked in `MIN_SESSIONS` sessions or more."""
    return len({c.session_id for c in members}) >= MIN_SESSIONS


def _suggested(
    rank: int,
    action: str,
    members: list[_Candidate],
    targets: list[PriorTarget],
    caution: Caution | None,
) -> SuggestedAction:
    best = members[0]
    sessions = len({m.session_id for m in members})
    confidence = min(1.0, best.confidence * (0.7 + 0.1 * min(3, sessions)))
    last = max(members, key=lambda m: epoch_ms(m.payload.get("timestamp")))
    return SuggestedAction(
        rank=rank,
        stepId=best.step_id,
        action=action,
        rationale=f"Worked {len(members)} time(s) in {sessions} session(s) on this screen",
        confidence=round(confidence, 3),
        support=Support(
            times=len(members),
            sessions=sessions,
            lastUsed=valid_time(last.payload.get("timestamp")),
        ),
        target=targets[0].as_arguments(),
        fallbacks=[target.as_arguments() for target in targets[1:]],
        preferredTarget=targets[0],
        fallbackTargets=targets[1:],
        batchIndex=best.batch_index,
        caution=caution,
    )


def _danger(members: list[_Candidate]) -> list[str]:
    """The evidence any of `members` gave that the action destroys something."""
    return sorted({kind for m in members for kind in m.payload.get("danger") or ()})


def _session_weight(members: list[_Candidate]) -> float:
    """The summed weight of the sessions among `members`, each by its best step."""
    best: dict[str, float] = {}
    for member in members:
        best[member.session_id] = max(best.get(member.session_id, 0.0), member.weight)
    return sum(best.values())


def _avoid(candidates: list[_Candidate]) -> list[AvoidTarget]:
    """Targets that failed at least twice on this screen (UI churn: renamed or stale)."""
    failures: dict[str, list[_Candidate]] = {}
    for candidate in candidates:
        key = _target_key(candidate.payload.get("target") or {})
        if key is not None:
            failures.setdefault(key, []).append(candidate)
    avoid = []
    for _key, members in sorted(failures.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if len(members) < MIN_FAILURES_TO_AVOID:
            continue
        target = members[0].payload.get("target") or {}
        error: PayloadError | dict[str, None] = members[0].payload.get("error") or {}
        kind = (
            "testId"
            if target.get("testId")
            else "selector"
            if target.get("selector")
            else "a11yHint"
        )
        value: str | dict[str, str] = (
            target.get("testId") or target.get("selector") or _hint(target) or ""
        )
        avoid.append(
            AvoidTarget(
                rationale="Frequently fails on this screen (UI churn?)",
                target=PriorTarget(type=kind, value=value).as_arguments(),
                errorCode=error.get("code"),
                frequency=len(members),
            )
        )
    return avoid[:MAX_AVOID]
