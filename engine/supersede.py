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
the generation's manifest. Each screen's facts are indexed by testId and by name
(`ScreenFacts`), and the rules judge one testId at a time, so the live writer judges again
only the testIds a batch touched, without reading any file.
"""

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, TypeVar

import orjson

from engine.labels import INTERACTION_TOOLS, tool_action
from engine.models import StepRecord, epoch_ms

MIN_OBSERVATIONS = 2
"""Later observations of the renamed element needed before a testId counts as renamed."""
NOT_FOUND = "MM_TARGET_NOT_FOUND"
T = TypeVar("T")
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

    def screens_of(self, step_ids: set[str]) -> set[str]:
        """The screens the session acted on in those steps."""
        return {
            a.screen for actions in self.actions.values() for a in actions if a.step_id in step_ids
        }

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


def changed_screens(old: SessionFacts | None, new: SessionFacts | None) -> set[str]:
    """The screens whose supersessions a session's new facts may change: those where what it
    did or saw differs, and those of steps whose detected decision on file differs (a decision
    file edited by hand is re-planned, as a rebuild would). A session that only gained a step
    changes one or two screens, not every screen it ever visited."""
    empty = SessionFacts("")
    old, new = old or empty, new or empty
    screens = {
        screen
        for screen in old.screens() | new.screens()
        if old.actions.get(screen) != new.actions.get(screen)
        or old.seen.get(screen) != new.seen.get(screen)
    }
    decided = {
        s
        for s in old.detected.keys() | new.detected.keys()
        if old.detected.get(s) != new.detected.get(s)
    }
    if decided:
        screens |= old.screens_of(decided) | new.screens_of(decided)
    return screens


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
    by_screen: dict[str, ScreenFacts] = {}
    wanted = None if screens is None else set(screens)
    for session in facts:
        for screen in session.screens():
            if wanted is None or screen in wanted:
                by_screen.setdefault(screen, ScreenFacts(screen)).add(session)
    detected: list[Detected] = []
    for screen in sorted(by_screen):
        detected += plan_screen(by_screen[screen])
    return sorted(detected, key=attrgetter("step_id"))


def plan_screen(facts: "ScreenFacts", test_ids: Iterable[str] | None = None) -> list[Detected]:
    """The supersessions of successful actions on `test_ids` (every testId acted on when None)
    on one screen."""
    detected: list[Detected] = []
    for test_id in sorted(facts.acted if test_ids is None else test_ids):
        worked, found = judge(test_id, facts)
        if found is not None:
            by, evidence = found
            detected += [Detected(old.step_id, by, evidence) for old in worked]
    return detected


_ORDER = attrgetter("ts", "step_id")


@dataclass
class ScreenFacts:
    """One screen's facts from every session, by testId and by name.

    The rules judge one testId at a time and read only its own entries and those of its name,
    so when one session changes, only the testIds it touched are judged again, at a cost that
    follows how often those were used, not how much the screen ever saw.
    """

    screen: str
    seen: dict[str, dict[str, Seen]] = field(default_factory=dict)
    """testId -> session id -> its sightings in that session."""
    acted: dict[str, dict[str, list[Action]]] = field(default_factory=dict)
    """testId -> session id -> the session's actions on it."""
    by_name: dict[str, dict[str, list[Action]]] = field(default_factory=dict)
    """name -> session id -> the session's actions on an element of that name."""
    named: dict[str, set[str]] = field(default_factory=dict)
    """name -> testIds sighted or acted on under that name (may name a few too many)."""
    names: dict[str, set[str]] = field(default_factory=dict)
    """testId -> the names it was sighted or acted on under (may name a few too many)."""
    missed: set[str] = field(default_factory=set)
    """testIds an action failed on with MM_TARGET_NOT_FOUND (may name a few too many)."""
    sessions: dict[str, list[Action]] = field(default_factory=dict)
    """session id -> its actions on this screen, in order."""

    def add(self, session: SessionFacts) -> None:
        """Index a session's facts of this screen."""
        sid = session.session_id
        for test_id, sighting in session.seen.get(self.screen, {}).items():
            self.seen.setdefault(test_id, {})[sid] = sighting
            if sighting.name:
                self._name(test_id, sighting.name)
        actions = session.actions.get(self.screen)
        if actions:
            self.sessions[sid] = actions
            for action in actions:
                if action.test_id:
                    self.acted.setdefault(action.test_id, {}).setdefault(sid, []).append(action)
                    if action.error_code == NOT_FOUND and not action.ok:
                        self.missed.add(action.test_id)
                if action.name:
                    self.by_name.setdefault(action.name, {}).setdefault(sid, []).append(action)
                    if action.test_id:
                        self._name(action.test_id, action.name)

    def _name(self, test_id: str, name: str) -> None:
        self.named.setdefault(name, set()).add(test_id)
        self.names.setdefault(test_id, set()).add(name)

    def unique(self, test_id: str) -> bool:
        """Whether nothing can supersede `test_id`: no other testId was known under any of its
        names, and no action on it failed as not found (most testIds; judged in O(1))."""
        if test_id in self.missed:
            return False
        return all(self.named[name] <= {test_id} for name in self.names.get(test_id, ()))

    def remove(self, session: SessionFacts) -> None:
        """Drop a session's facts of this screen (before adding its new ones)."""
        sid = session.session_id
        for test_id in session.seen.get(self.screen, {}):
            _drop(self.seen, test_id, sid)
        self.sessions.pop(sid, None)
        for action in session.actions.get(self.screen, []):
            if action.test_id:
                _drop(self.acted, action.test_id, sid)
            if action.name:
                _drop(self.by_name, action.name, sid)

    def touched(self, session: SessionFacts) -> set[str]:
        """The testIds a session's facts of this screen bear on: those it saw or acted on, and
        every testId known under a name it saw or acted on (their identity may be that name)."""
        seen = session.seen.get(self.screen, {})
        actions = session.actions.get(self.screen, [])
        ids = set(seen) | {a.test_id for a in actions if a.test_id}
        names = {s.name for s in seen.values() if s.name} | {a.name for a in actions if a.name}
        for name in names:
            ids |= self.named.get(name, set())
        return ids


def _drop(index: dict[str, dict[str, T]], key: str, session_id: str) -> None:
    entries = index.get(key)
    if entries is not None:
        entries.pop(session_id, None)
        if not entries:
            del index[key]


def judge(test_id: str, facts: ScreenFacts) -> tuple[list[Action], tuple[Action, str] | None]:
    """When the successful actions on `test_id` no longer work: those actions, and the action
    that works instead with the evidence (`renamed` or `not-found`)."""
    if facts.unique(test_id):
        return [], None
    actions = [a for acts in facts.acted.get(test_id, {}).values() for a in acts]
    worked = [a for a in actions if a.ok]
    if not worked:
        return [], None
    sightings = facts.seen.get(test_id, {})
    since = max(max((s.last for s in sightings.values()), default=0), *(a.ts for a in worked))
    # An element's identity is the latest successful action's that named it, else its first
    # sighting's (sessions in id order: the live writer and a rebuild must agree).
    named = [a for a in worked if a.name]
    if named:
        latest = max(named, key=_ORDER)
        identity = (latest.role, latest.name)
    else:
        first = min((sid for sid, s in sightings.items() if s.name), default=None)
        identity = ("", "") if first is None else (sightings[first].role, sightings[first].name)
    failed = [a for a in actions if not a.ok and a.error_code == NOT_FOUND and a.ts > since]
    found = _renamed(test_id, identity, since, facts) or _not_found(
        test_id, identity, sorted(failed, key=_ORDER), facts
    )
    return worked, found


def _renamed(
    test_id: str, identity: tuple[str, str], since: int, facts: ScreenFacts
) -> tuple[Action, str] | None:
    """After `test_id` was last seen, the same element was observed at least
    `MIN_OBSERVATIONS` times under another testId, and an action on it worked there."""
    role, name = identity
    if not name:
        return None
    observations = 0
    for other in facts.named.get(name, set()) - {test_id}:
        for sighting in facts.seen.get(other, {}).values():
            if (
                sighting.name == name
                and sighting.first > since
                and _same_element(role, name, sighting.role, name)
            ):
                observations += sighting.count
    if observations < MIN_OBSERVATIONS:
        return None
    works = [
        a
        for acts in facts.by_name.get(name, {}).values()
        for a in acts
        if a.ok
        and a.ts > since
        and a.test_id != test_id
        and _same_element(role, name, a.role, name)
    ]
    return (min(works, key=_ORDER), "renamed") if works else None


def _not_found(
    test_id: str, identity: tuple[str, str], failed: list[Action], facts: ScreenFacts
) -> tuple[Action, str] | None:
    """`failed`: the actions on `test_id` that failed with MM_TARGET_NOT_FOUND after it was last
    seen, oldest first. After one of them, the
    session's next action of the same kind on this screen worked on another target: the same
    element by role and name, or — when the element has no known name (a text field) — the
    agent's retry, as long as nothing names it as a different element."""
    role, name = identity
    for miss in failed:
        later = facts.sessions[miss.step_id.split("/", 1)[0]]
        retry = next((a for a in later if a.ts > miss.ts and a.tool == miss.tool), None)
        if retry is None or not retry.ok or retry.test_id == test_id:
            continue
        if name and retry.name and not _same_element(role, name, retry.role, retry.name):
            continue
        return retry, "not-found"
    return None


def decode_all(rows: Mapping[str, bytes]) -> dict[str, SessionFacts]:
    """Facts of many sessions as stored in the manifest (session id -> encoded facts)."""
    return {session_id: SessionFacts.decode(session_id, data) for session_id, data in rows.items()}
