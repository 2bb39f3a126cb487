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
  `MM_TARGET_NOT_FOUND` and the session's next action of the same kind on that screen (the
  agent's retry) worked on another target, which is not named as a different element. This
  also covers elements without a visible name (text fields), which observations cannot match.

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
    tool: str
    """`click`, `type` or `wait_for`."""

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
            self.tool,
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
    actions: dict[str, list[Action]] = field(default_factory=dict)
    """screen acted on -> the session's actions there, in order."""
    seen: dict[str, dict[str, Seen]] = field(default_factory=dict)
    """screen -> testId -> sightings."""
    detected: dict[str, str] = field(default_factory=dict)
    """The session's detected decisions on file when it was indexed: step id -> superseded by."""

    def screens(self) -> set[str]:
        return set(self.actions) | set(self.seen)

    def encode(self) -> bytes:
        return orjson.dumps(
            {
                "a": [a.to_list() for actions in self.actions.values() for a in actions],
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
        actions: dict[str, list[Action]] = {}
        for row in raw["a"]:
            action = Action(*row)
            actions.setdefault(action.screen, []).append(action)
        return cls(
            session_id,
            actions,
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
        action = tool_action(tool.name)
        if tool.target is not None and action in INTERACTION_TOOLS:
            error = record.outcome.error
            self.facts.actions.setdefault(on_screen, []).append(
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
                    action,
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


@dataclass
class _Screen:
    """One screen's facts from every session, indexed for the rules."""

    worked: dict[str, list[Action]] = field(default_factory=dict)
    """testId -> successful actions on it."""
    last_seen: dict[str, int] = field(default_factory=dict)
    identity: dict[str, tuple[str, str]] = field(default_factory=dict)
    sightings: dict[str, list[tuple[str, Seen]]] = field(default_factory=dict)
    """name -> (testId, its sightings in one session)."""
    named_ok: dict[str, list[Action]] = field(default_factory=dict)
    """name -> successful actions on an element of that name, oldest first."""
    not_found: dict[str, list[Action]] = field(default_factory=dict)
    """testId -> actions on it that failed with MM_TARGET_NOT_FOUND."""
    sessions: dict[str, list[Action]] = field(default_factory=dict)
    """session id -> its actions on this screen, in order."""


def _index_screen(screen: str, sessions: Iterable[SessionFacts]) -> _Screen:
    """Sessions are read in id order: an element's identity is its first sighting's, so the
    live writer (sessions in the order they changed) and a rebuild (in the manifest's order)
    must agree on which one is first."""
    facts = _Screen()
    actions: list[Action] = []
    for session in sorted(sessions, key=lambda s: s.session_id):
        mine = session.actions.get(screen, [])
        if mine:
            facts.sessions[session.session_id] = mine
            actions += mine
        for test_id, sighting in session.seen.get(screen, {}).items():
            facts.last_seen[test_id] = max(facts.last_seen.get(test_id, 0), sighting.last)
            if sighting.name:
                facts.identity.setdefault(test_id, (sighting.role, sighting.name))
                facts.sightings.setdefault(sighting.name, []).append((test_id, sighting))
    actions.sort(key=lambda a: (a.ts, a.step_id))
    for action in actions:
        if action.ok:
            if action.name:
                facts.named_ok.setdefault(action.name, []).append(action)
            if action.test_id:
                facts.worked.setdefault(action.test_id, []).append(action)
                seen = facts.last_seen.get(action.test_id, 0)
                facts.last_seen[action.test_id] = max(seen, action.ts)
                if action.name:
                    facts.identity[action.test_id] = (action.role, action.name)
        elif action.error_code == NOT_FOUND and action.test_id:
            facts.not_found.setdefault(action.test_id, []).append(action)
    return facts


def plan_screen(screen: str, sessions: Iterable[SessionFacts]) -> list[Detected]:
    """The supersessions of one screen, from every session that acted on or saw it."""
    facts = _index_screen(screen, sessions)
    detected: list[Detected] = []
    for test_id in sorted(facts.worked):
        found = _renamed(test_id, facts) or _not_found(test_id, facts)
        if found is not None:
            by, evidence = found
            detected += [Detected(old.step_id, by, evidence) for old in facts.worked[test_id]]
    return detected


def _renamed(test_id: str, facts: _Screen) -> tuple[Action, str] | None:
    """After `test_id` was last seen, the same element was observed at least
    `MIN_OBSERVATIONS` times under another testId, and an action on it worked there."""
    role, name = facts.identity.get(test_id, ("", ""))
    if not name:
        return None
    since = facts.last_seen[test_id]
    observations = sum(
        sighting.count
        for other, sighting in facts.sightings.get(name, [])
        if other != test_id
        and sighting.first > since
        and _same_element(role, name, sighting.role, name)
    )
    if observations < MIN_OBSERVATIONS:
        return None
    for action in facts.named_ok.get(name, []):
        if (
            action.ts > since
            and action.test_id != test_id
            and _same_element(role, name, action.role, name)
        ):
            return action, "renamed"
    return None


def _not_found(test_id: str, facts: _Screen) -> tuple[Action, str] | None:
    """After `test_id` was last seen, an action on it failed with MM_TARGET_NOT_FOUND, and the
    session's next action of the same kind on this screen worked on another target: the same
    element by role and name, or — when the element has no known name (a text field) — the
    agent's retry, as long as nothing names it as a different element."""
    role, name = facts.identity.get(test_id, ("", ""))
    since = facts.last_seen[test_id]
    for failed in facts.not_found.get(test_id, []):
        if failed.ts <= since:
            continue
        later = facts.sessions[failed.step_id.split("/", 1)[0]]
        retry = next((a for a in later if a.ts > failed.ts and a.tool == failed.tool), None)
        if retry is None or not retry.ok or retry.test_id == test_id:
            continue
        if name and retry.name and not _same_element(role, name, retry.role, retry.name):
            continue
        return retry, "not-found"
    return None


def decode_all(rows: Mapping[str, bytes]) -> dict[str, SessionFacts]:
    """Facts of many sessions as stored in the manifest (session id -> encoded facts)."""
    return {session_id: SessionFacts.decode(session_id, data) for session_id, data in rows.items()}
