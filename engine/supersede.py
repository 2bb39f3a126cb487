"""Superseded steps: which recorded actions no longer work the way they were recorded.

UI code changes under the agents: a testId is renamed and every step that clicked the old id
becomes advice that fails. Decisions come from evidence in later sessions, by a pure planner
over compact per-session facts (never a model, never one screenshot):

- **renamed**: on the same screen, after the old testId was last seen (visible, or acted on
  successfully), at least `MIN_OBSERVATIONS` observations show an element with the same role
  and name under another testId. Only such observations count: a half-loaded page that lacks
  the old id *and* the element it names says nothing, and one observation can be a transient
  state (a skeleton, an A/B variant), two cannot easily be.
- **not found**: after the old testId was last seen, an action on it failed with
  `MM_TARGET_NOT_FOUND` and, later in that session, an action on the same role and name under
  another target worked.

Either way the old id must stay unseen afterwards (a later sighting or success cancels the
decision, so a branch that still has the old UI keeps its steps), and the newer successful
action on the same role and name is the `supersededBy`. Every successful action on the old
testId on that screen is superseded. Steps without a testId (selectors that name no testId,
a11y refs) are never superseded by detection; `mm_knowledge_supersede` covers what evidence
cannot see.

Facts are extracted while a session is indexed (`FactsCollector`, fed by
`engine.documents.step_documents` with the context it already tracks) and kept per session in
the generation's manifest, so the live writer can re-plan the screens a batch touched without
reading any file.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson

from engine.labels import INTERACTION_TOOLS, tool_action
from engine.models import StepRecord, epoch_ms

MIN_OBSERVATIONS = 2
"""Later observations of the renamed element needed before a testId counts as renamed."""
NOT_FOUND = "MM_TARGET_NOT_FOUND"
_SELECTOR_TEST_ID = re.compile(r"""^\[data-testid=["']?([^"'\]]+)["']?\]$""")


def selector_test_id(selector: str | None) -> str | None:
    """`[data-testid="coin-overview-send"]` names a testId as surely as `{"testId": …}` does."""
    if not selector:
        return None
    match = _SELECTOR_TEST_ID.match(selector.strip())
    return match.group(1) if match else None


@dataclass(frozen=True, slots=True)
class Action:
    """One interaction (click, type, wait_for) on the screen it was taken on."""

    step_id: str
    ts: int
    timestamp: str
    screen: str
    test_id: str | None
    role: str
    name: str
    """Lowercased visible name of the target ("" when unknown)."""
    ok: bool
    error_code: str | None
    target: str
    """How results show the target: `testId:…`, `selector:…` or `a11y:role:"name"`."""

    def to_list(self) -> list[Any]:
        return [
            self.step_id,
            self.ts,
            self.timestamp,
            self.screen,
            self.test_id,
            self.role,
            self.name,
            self.ok,
            self.error_code,
            self.target,
        ]


@dataclass(slots=True)
class Seen:
    """A testId visible on a screen during one session: when first and last, how often, as what."""

    first: int
    last: int
    count: int
    role: str
    name: str


@dataclass(slots=True)
class SessionFacts:
    """What supersede detection needs of one session (stored as JSON in the manifest)."""

    session_id: str
    actions: list[Action] = field(default_factory=list)
    seen: dict[str, dict[str, Seen]] = field(default_factory=dict)
    """screen -> testId -> sightings."""
    detected: dict[str, str] = field(default_factory=dict)
    """The session's detected decisions on file when it was indexed: step id -> superseded by."""

    def screens(self) -> set[str]:
        return {a.screen for a in self.actions} | set(self.seen)

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "a": [a.to_list() for a in self.actions],
                "s": {
                    screen: {t: [s.first, s.last, s.count, s.role, s.name] for t, s in ids.items()}
                    for screen, ids in self.seen.items()
                },
                "d": self.detected,
            }
        )

    @classmethod
    def decode(cls, session_id: str, data: bytes) -> "SessionFacts":
        raw = orjson.loads(data)
        return cls(
            session_id,
            [Action(*row) for row in raw["a"]],
            {screen: {t: Seen(*row) for t, row in ids.items()} for screen, ids in raw["s"].items()},
            raw["d"],
        )


class FactsCollector:
    """Collects a session's facts step by step, with the screen, refs and texts the agent saw
    just before each step (the indexer's `SessionContext`, passed in by the caller)."""

    def __init__(self, facts: SessionFacts) -> None:
        self.facts = facts

    def add(
        self,
        step_id: str,
        record: StepRecord,
        on_screen: str,
        landed: str,
        role: str | None,
        name: str | None,
        target: str,
    ) -> None:
        """Record the step's action (taken on `on_screen`) and its observation (of `landed`)."""
        tool = record.tool
        if tool.target is not None and tool_action(tool.name) in INTERACTION_TOOLS:
            error = record.outcome.error
            self.facts.actions.append(
                Action(
                    step_id,
                    epoch_ms(record.timestamp),
                    record.timestamp,
                    on_screen,
                    tool.target.testId or selector_test_id(tool.target.selector),
                    (role or "").lower(),
                    (name or "").strip().lower(),
                    record.outcome.ok,
                    error.code if error else None,
                    target,
                )
            )
        obs = record.observation
        if not obs.testIds:
            return
        ts = epoch_ms(record.timestamp)
        roles = {n.name.strip().lower(): n.role.lower() for n in obs.a11y.nodes if n.name}
        screen = self.facts.seen.setdefault(landed, {})
        for item in obs.testIds:
            if item.visible is False:
                continue
            known = screen.get(item.testId)
            if known is None:
                text = (item.text or "").strip().lower()
                screen[item.testId] = Seen(ts, ts, 1, roles.get(text, ""), text)
            else:
                known.first, known.last = min(known.first, ts), max(known.last, ts)
                known.count += 1


@dataclass(frozen=True, slots=True)
class Detected:
    """A detected supersession: `step_id` no longer works; `by` is what works instead."""

    step_id: str
    by: Action
    evidence: str
    """`renamed` or `not-found`."""


def _same_element(role: str, name: str, other_role: str, other_name: str) -> bool:
    return bool(name) and name == other_name and (not role or not other_role or role == other_role)


def plan(facts: Iterable[SessionFacts], screens: Iterable[str] | None = None) -> list[Detected]:
    """Every detected supersession on `screens` (all screens when None), in step-id order.

    Deterministic: the same facts give the same decisions in any order.
    """
    by_screen: dict[str, list[SessionFacts]] = {}
    wanted = None if screens is None else set(screens)
    for session in facts:
        for screen in session.screens():
            if wanted is None or screen in wanted:
                by_screen.setdefault(screen, []).append(session)
    detected: list[Detected] = []
    for screen in sorted(by_screen):
        detected += plan_screen(screen, by_screen[screen])
    return sorted(detected, key=lambda d: d.step_id)


def plan_screen(screen: str, sessions: Iterable[SessionFacts]) -> list[Detected]:
    """The supersessions of one screen, from every session that acted on or saw it."""
    actions: list[Action] = []
    seen: list[tuple[str, str, Seen]] = []  # (session, testId, sightings)
    for session in sessions:
        actions += [a for a in session.actions if a.screen == screen]
        for test_id, sighting in session.seen.get(screen, {}).items():
            seen.append((session.session_id, test_id, sighting))
    last_seen: dict[str, int] = {}
    identity: dict[str, tuple[str, str]] = {}
    for _, test_id, sighting in seen:
        last_seen[test_id] = max(last_seen.get(test_id, sighting.last), sighting.last)
        if sighting.name:
            identity.setdefault(test_id, (sighting.role, sighting.name))
    worked: dict[str, list[Action]] = {}
    for action in actions:
        if action.ok and action.test_id:
            worked.setdefault(action.test_id, []).append(action)
            last_seen[action.test_id] = max(last_seen.get(action.test_id, action.ts), action.ts)
            if action.name:
                identity[action.test_id] = (action.role, action.name)
    successors = sorted((a for a in actions if a.ok and a.name), key=lambda a: (a.ts, a.step_id))
    detected: list[Detected] = []
    for test_id in sorted(worked):
        if test_id not in identity:
            continue
        role, name = identity[test_id]
        since = last_seen[test_id]
        evidence = _evidence(test_id, role, name, since, seen, actions)
        if evidence is None:
            continue
        by = next(
            (
                a
                for a in successors
                if a.ts > since
                and a.test_id != test_id
                and _same_element(role, name, a.role, a.name)
            ),
            None,
        )
        if by is None:
            continue
        detected += [Detected(old.step_id, by, evidence) for old in worked[test_id]]
    return detected


def _evidence(
    test_id: str,
    role: str,
    name: str,
    since: int,
    seen: list[tuple[str, str, Seen]],
    actions: list[Action],
) -> str | None:
    """Why `test_id` no longer works after `since` (its last sighting), or None."""
    observations = sum(
        sighting.count
        for _, other, sighting in seen
        if other != test_id
        and sighting.first > since
        and _same_element(role, name, sighting.role, sighting.name)
    )
    if observations >= MIN_OBSERVATIONS:
        return "renamed"
    for failed in actions:
        if failed.ok or failed.test_id != test_id or failed.error_code != NOT_FOUND:
            continue
        if failed.ts <= since:
            continue
        session = failed.step_id.split("/", 1)[0]
        if any(
            a.ok
            and a.ts > failed.ts
            and a.test_id != test_id
            and a.step_id.startswith(session + "/")
            and _same_element(role, name, a.role, a.name)
            for a in actions
        ):
            return "not-found"
    return None


def decode_all(rows: Mapping[str, bytes]) -> dict[str, SessionFacts]:
    """Facts of many sessions as stored in the manifest (session id -> encoded facts)."""
    return {session_id: SessionFacts.decode(session_id, data) for session_id, data in rows.items()}
