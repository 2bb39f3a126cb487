"""Superseded steps: which recorded actions no longer work the way they were recorded.

UI code changes under the agents: a testId is renamed and every step that clicked the old id
becomes advice that fails. Decisions come from evidence in later sessions, by a pure planner
over compact per-session facts (never a model, never one screenshot):

- **renamed**: on the same screen, after the old testId was last seen (visible, or acted on
  successfully), at least `MIN_OBSERVATIONS` observations show an element with the same role
  and name under another testId. Only such observations count: a half-loaded page that lacks
  the old id *and* the element it names says nothing, and one observation can be a transient
  state (a skeleton, an A/B variant), two cannot easily be.
- **not found**: after the old testId was last seen, an action on it failed as not there
  (`MM_TARGET_NOT_FOUND`, or a wait for it that timed out: `MISSING`) and the session's next
  action of the same kind on that screen (the agent's retry) worked on another target, which
  is not named as a different element. This also covers elements without a visible name (text
  fields), which observations cannot match.
- **replaced**: what no rule above decides, a rename of the testId on that screen does
  (`engine.records.renames`: a newer id took its place, told by a retry, the same visible
  name or the same parts of the id; sessions mostly just stop using the old id, leaving no
  failure behind); the first action that worked on the newer id is the `supersededBy`.

Either way the old id must stay unseen afterwards (a later sighting or success cancels the
decision, so a branch that still has the old UI keeps its steps), and the newer successful
action on the same role and name is the `supersededBy`. Every successful action on the old
testId on that screen is superseded. Steps without a testId (selectors that name no testId,
a11y refs) are never superseded by detection; `mm_knowledge_supersede` covers what evidence
cannot see.

Facts are extracted while a session is indexed (`FactsCollector`, fed by
`engine.index.documents.step_documents` with the context it already tracks) and kept per session in
the generation's manifest. Each screen's facts are indexed by testId and by name
(`ScreenFacts`), and the rules judge one testId at a time, so the live writer judges again
only the testIds a batch touched, without reading any file, and reads of each only what
happened after its last use: a testId clicked in every session costs a live batch no more
than a rare one (`engine.index.supersede_decisions.write_detected` then compares only the changed
sessions' decisions while a testId's verdict stands).
"""

import bisect
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from operator import attrgetter, itemgetter
from sys import intern
from typing import Any, Generic, TypeVar

import orjson

from engine.core import OBSERVATIONS_CACHED, ByIdentity
from engine.records.labels import INTERACTION_TOOLS, tool_action
from engine.records.models import (
    MAX_AHEAD_MS,
    Observation,
    StepRecord,
    current_ms,
    epoch_ms,
)
from engine.records.renames import Known, Rename, Retry, renames_on

MIN_OBSERVATIONS = 2
MIN_SESSIONS = 2
"""Sessions whose evidence outweighs the sessions in which a testId worked (`outweighs`)."""
"""Later observations of the renamed element needed before a testId counts as renamed."""
NOT_FOUND = "MM_TARGET_NOT_FOUND"
MISSING = frozenset({NOT_FOUND, "MM_WAIT_TIMEOUT"})
"""Error codes of an action whose element was not there: not found, or waited for until the
wait timed out (Playwright's locator timeout: a renamed testId mostly fails this way)."""
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

    def copy(self) -> "SessionFacts":
        """An independent copy, to be extended while this one stays as it is: the lists and
        sightings a collector changes are new, the actions themselves (frozen) are shared.
        A long session's facts are copied for each step appended to it, so this is not
        `decode(encode())`, which reads all of them again."""
        return SessionFacts(
            self.session_id,
            {screen: list(actions) for screen, actions in self.actions.items()},
            {
                screen: {t: Seen(s.first, s.last, s.count, s.role, s.name) for t, s in ids.items()}
                for screen, ids in self.seen.items()
            },
            dict(self.detected),
        )

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
        """The facts `encode` wrote. The writer holds every session's (1M steps: ~1M actions
        and ~0.6M sightings), and their screens, testIds, roles, names, targets and tools are
        the same few thousand strings over and over: each is kept once (`sys.intern`), which
        halves what the decoded facts hold."""
        raw = orjson.loads(data)
        actions: dict[str, list[Action]] = {}
        for step_id, ts, timestamp, screen, test_id, role, name, ok, code, target, tool in raw["a"]:
            screen = intern(screen)
            action = Action(
                step_id,
                ts,
                timestamp,
                screen,
                test_id and intern(test_id),
                intern(role),
                intern(name),
                ok,
                code and intern(code),
                intern(target),
                intern(tool),
            )
            actions.setdefault(screen, []).append(action)
        seen = {
            intern(screen): {
                intern(t): Seen(first, last, n, intern(role), intern(name))
                for t, (first, last, n, role, name) in ids.items()
            }
            for screen, ids in raw["s"].items()
        }
        return cls(session_id, actions, seen, raw["d"])


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
        self.latest_ms = current_ms() + MAX_AHEAD_MS
        """Later times are from the future (`from_the_future`; taken once per session)."""

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
        """Record the step's action (taken on `on_screen`) and its observation (of `landed`);
        nothing of a step dated in the future (`from_the_future`: it would stay the newest
        evidence of all, hiding every later honest use until that date)."""
        ts = epoch_ms(record.timestamp)
        if ts > self.latest_ms:
            return
        tool = record.tool
        action = tool_action(tool.name)
        if tool.target is not None and action in INTERACTION_TOOLS:
            error = record.outcome.error
            self.facts.actions.setdefault(on_screen, []).append(
                Action(
                    step_id,
                    ts,
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
        visible = visible_test_ids(record.observation)
        if not visible:
            return
        screen = self.facts.seen.setdefault(landed, {})
        for test_id, text, item_role in visible:
            known = screen.get(test_id)
            if known is None:
                screen[test_id] = Seen(ts, ts, 1, item_role, text)
            else:
                known.first, known.last = min(known.first, ts), max(known.last, ts)
                known.count += 1


def _visible_test_ids(obs: Observation) -> list[tuple[str, str, str]]:
    """(testId, its text and the role of the accessibility node of that name, both lowercase)
    of each visible element the observation lists, in order."""
    roles = {n.name.strip().lower(): n.role.lower() for n in obs.a11y.nodes if n.name}
    visible = []
    for item in obs.testIds:
        if item.visible is not False:
            text = (item.text or "").strip().lower()
            visible.append((item.testId, text, roles.get(text, "")))
    return visible


visible_test_ids = ByIdentity(_visible_test_ids, OBSERVATIONS_CACHED)
"""(derived once per parsed observation: records share them, `knowledge_root.parse_step`)"""


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
    planner = Planner(screens)
    for session in facts:
        planner.add(session)
    return planner.detected()


class Planner:
    """`plan`, given the sessions one at a time: a bulk build adds each as its analysis comes
    in, while the workers still analyse the rest (indexing the facts by screen is most of the
    work: 0.65 of 0.72 CPU-s at 100k steps), and asks for the decisions once all are in."""

    def __init__(self, screens: Iterable[str] | None = None) -> None:
        self._by_screen: dict[str, ScreenFacts] = {}
        self._wanted = None if screens is None else set(screens)

    def add(self, session: SessionFacts) -> None:
        for screen in session.screens():
            if self._wanted is None or screen in self._wanted:
                self._by_screen.setdefault(screen, ScreenFacts(screen)).add(session, bulk=True)

    def detected(self) -> list[Detected]:
        detected: list[Detected] = []
        for screen in sorted(self._by_screen):
            self._by_screen[screen].settle()
            detected += plan_screen(self._by_screen[screen])
        return sorted(detected, key=attrgetter("step_id"))

    def renames(self) -> list[Rename]:
        """Every screen's renames (`ScreenFacts.renames`), once `detected` has run."""
        return [r for s in sorted(self._by_screen) for r in self._by_screen[s].renames().values()]


def plan_screen(facts: "ScreenFacts") -> list[Detected]:
    """The supersessions of successful actions on one screen."""
    detected: list[Detected] = []
    for test_id in sorted(facts.acted):
        found = judge(test_id, facts)
        if found is not None:
            detected += superseded(facts.acted[test_id].values(), found)
    return detected


def superseded(actions: Iterable[list[Action]], found: tuple[Action, str]) -> list[Detected]:
    """The successful ones of `actions` (per session, on a testId judged to no longer work),
    superseded by `found` (the action that works instead, and the evidence)."""
    by, evidence = found
    return [Detected(a.step_id, by, evidence) for acts in actions for a in acts if a.ok]


_ORDER = attrgetter("ts", "step_id")


class Extreme(Generic[T]):
    """The best of per-session values (the largest, or the smallest) as sessions come, change
    and go, without reading them all each time: the best is remembered, and read again from
    every session only when the session holding it is removed and not put back at least as
    good (a live batch removes a session's facts and adds them again, grown)."""

    def __init__(self, *, largest: bool) -> None:
        self.largest = largest
        self.values: dict[str, tuple[Any, T]] = {}
        """session id -> (its ordering value, what it carries)."""
        self._best: tuple[str, Any] | None = None
        """(session id, ordering value) of the best, when known."""
        self._known = True
        self._removed: tuple[str, Any] | None = None
        """The best until it was removed: it stays the best if put back at least as good."""

    def _beats(self, order: Any, other: Any) -> bool:
        return bool(order > other) if self.largest else bool(order < other)

    def put(self, session_id: str, order: Any, item: T, *, bulk: bool = False) -> None:
        """Set a session's value (`bulk`: one of many; the best is found when first read)."""
        self.values[session_id] = (order, item)
        if bulk:
            self._known, self._removed = False, None
            return
        removed, self._removed = self._removed, None
        if removed is not None and removed[0] == session_id and not self._beats(removed[1], order):
            self._best, self._known = (session_id, order), True
        elif not self._known:
            return
        elif self._best is None or self._beats(order, self._best[1]):
            self._best = (session_id, order)
        elif self._best[0] == session_id:  # the best got worse
            self._known = False

    def remove(self, session_id: str) -> None:
        if self.values.pop(session_id, None) is None:
            return
        self._removed = None
        if self._known and self._best is not None and self._best[0] == session_id:
            self._removed, self._best, self._known = self._best, None, False

    def best(self) -> tuple[Any, T] | None:
        """(ordering value, item) of the best session's value, None when no session has one."""
        if not self._known:
            pick = max if self.largest else min
            found = pick(self.values.items(), key=lambda kv: kv[1][0], default=None)
            self._best = (found[0], found[1][0]) if found else None
            self._known, self._removed = True, None
        return self.values[self._best[0]] if self._best is not None else None


def _first_after(rows: list[tuple[Any, ...]], since: int) -> int:
    """Index of the first row (ordered by time first) later than `since`."""
    return bisect.bisect_right(rows, since, key=itemgetter(0))


ActionRow = tuple[int, str, Action]
"""(ts, step id, action). The actions of one batch share its time and step id: such rows are
ordered by those two alone and keep the batch's order among themselves (an `Action` has no
order of its own)."""
_ROW_TIME = itemgetter(0, 1)


def _whole(row: tuple[Any, ...]) -> tuple[Any, ...]:
    return row


def _insert(
    rows: list[Any], row: tuple[Any, ...], bulk: bool, key: Callable[[Any], Any] = _whole
) -> None:
    """`row` into `rows`, ordered by `key` (after the rows it ties with); `bulk`: appended,
    for `ScreenFacts.settle` to order."""
    if bulk:
        rows.append(row)
    else:
        bisect.insort(rows, row, key=key)


def _remove_row(rows: list[Any], row: tuple[Any, ...], key: Callable[[Any], Any] = _whole) -> None:
    """`row` out of `rows` (ordered by `key`), if it is there."""
    at = bisect.bisect_left(rows, key(row), key=key)
    while at < len(rows) and key(rows[at]) == key(row):
        if rows[at] == row:
            del rows[at]
            return
        at += 1


@dataclass
class ScreenFacts:
    """One screen's facts from every session, by testId and by name.

    The rules judge one testId at a time and read only summaries kept up to date as sessions
    come and go (the latest time the testId was seen or worked, the element it names, its
    not-found failures, and per name the sightings and successes ordered by time), so a live
    batch judges again the testIds it touched at a cost that follows what happened after
    their last use, not how often a popular testId was ever used. Only a testId found
    superseded reads all its successful actions (each becomes a decision).
    """

    screen: str
    seen: dict[str, dict[str, Seen]] = field(default_factory=dict)
    """testId -> session id -> its sightings in that session."""
    acted: dict[str, dict[str, list[Action]]] = field(default_factory=dict)
    """testId -> session id -> the session's actions on it."""
    named: dict[str, set[str]] = field(default_factory=dict)
    """name -> testIds sighted or acted on under that name (may name a few too many)."""
    names: dict[str, set[str]] = field(default_factory=dict)
    """testId -> the names it was sighted or acted on under (may name a few too many)."""
    missed: set[str] = field(default_factory=set)
    """testIds an action failed on as not there (`MISSING`; may name a few too many)."""
    sessions: dict[str, list[Action]] = field(default_factory=dict)
    """session id -> its actions on this screen, in order."""
    worked: dict[str, int] = field(default_factory=dict)
    """testId -> how many actions on it worked."""
    last_used: dict[str, Extreme[None]] = field(default_factory=dict)
    """testId -> per session, the last time it was seen or worked there (the latest wins)."""
    latest_named: dict[str, Extreme[tuple[str, str]]] = field(default_factory=dict)
    """testId -> per session, (ts, step id) of its latest named success there, with the
    element's (role, name) (the latest wins: the element's identity)."""
    first_named: dict[str, Extreme[tuple[str, str]]] = field(default_factory=dict)
    """testId -> per session with a named sighting, (role, name) (the first session id wins:
    the identity of an element never acted on by name)."""
    failures: dict[str, list[ActionRow]] = field(default_factory=dict)
    """testId -> its failures as not there (`MISSING`) as (ts, step id, action), in order."""
    first_used: dict[str, Extreme[None]] = field(default_factory=dict)
    """testId -> per session, the first time it was seen or worked there (the earliest wins)."""
    sightings: dict[str, int] = field(default_factory=dict)
    """testId -> how many observations of this screen showed it."""
    version: int = 0
    """Bumped by every add and remove (what `renames` was computed for)."""
    known_renames: tuple[int, dict[str, Rename]] | None = None
    """(version, renames) of the last `renames()`."""
    sighted: dict[str, list[tuple[int, str, str]]] = field(default_factory=dict)
    """name -> sightings under that name as (first seen, session id, testId), in that order."""
    succeeded: dict[str, list[ActionRow]] = field(default_factory=dict)
    """name -> successful actions on an element of that name as (ts, step id, action)."""
    verdicts: dict[str, tuple[str, str] | None] = field(default_factory=dict)
    """testId -> its verdict as last written by the live writer, (superseded by, evidence) or
    None (`engine.index.supersede_decisions.write_detected`)."""

    def add(self, session: SessionFacts, *, bulk: bool = False) -> None:
        """Index a session's facts of this screen. `bulk`: one of many added at once, with
        `settle()` after the last (rows are appended, then sorted once; best values are
        found when first read)."""
        sid = session.session_id
        self.version += 1
        last: dict[str, int] = {}
        first: dict[str, int] = {}
        latest: dict[str, Action] = {}
        for test_id, sighting in session.seen.get(self.screen, {}).items():
            self.seen.setdefault(test_id, {})[sid] = sighting
            last[test_id] = sighting.last
            first[test_id] = sighting.first
            self.sightings[test_id] = self.sightings.get(test_id, 0) + sighting.count
            if sighting.name:
                self._name(test_id, sighting.name)
                rows = self.sighted.setdefault(sighting.name, [])
                _insert(rows, (sighting.first, sid, test_id), bulk)
                _extreme(self.first_named, test_id, largest=False).put(
                    sid, sid, (sighting.role, sighting.name), bulk=bulk
                )
        actions = session.actions.get(self.screen)
        if actions:
            self.sessions[sid] = actions
            for action in actions:
                self._add_action(sid, action, last, latest, bulk)
                if action.ok and action.test_id:
                    first[action.test_id] = min(first.get(action.test_id, action.ts), action.ts)
        for test_id, ts in last.items():
            _extreme(self.last_used, test_id, largest=True).put(sid, ts, None, bulk=bulk)
        for test_id, ts in first.items():
            _extreme(self.first_used, test_id, largest=False).put(sid, ts, None, bulk=bulk)
        for test_id, action in latest.items():
            _extreme(self.latest_named, test_id, largest=True).put(
                sid, (action.ts, action.step_id), (action.role, action.name), bulk=bulk
            )

    def settle(self) -> None:
        """Order the rows after a `bulk` of adds."""
        for sightings in self.sighted.values():
            sightings.sort()
        for rows in [*self.succeeded.values(), *self.failures.values()]:
            rows.sort(key=_ROW_TIME)

    def _add_action(
        self, sid: str, action: Action, last: dict[str, int], latest: dict[str, Action], bulk: bool
    ) -> None:
        test_id, name = action.test_id, action.name
        if action.ok and name:
            row = (action.ts, action.step_id, action)
            _insert(self.succeeded.setdefault(name, []), row, bulk, _ROW_TIME)
        if not test_id:
            return
        self.acted.setdefault(test_id, {}).setdefault(sid, []).append(action)
        if name:
            self._name(test_id, name)
        if action.ok:
            self.worked[test_id] = self.worked.get(test_id, 0) + 1
            last[test_id] = max(last.get(test_id, action.ts), action.ts)
            if name and (test_id not in latest or _ORDER(latest[test_id]) < _ORDER(action)):
                latest[test_id] = action
        elif action.error_code in MISSING:
            self.missed.add(test_id)
            row = (action.ts, action.step_id, action)
            _insert(self.failures.setdefault(test_id, []), row, bulk, _ROW_TIME)

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
        self.version += 1
        used: set[str] = set()
        for test_id, sighting in session.seen.get(self.screen, {}).items():
            _drop(self.seen, test_id, sid)
            used.add(test_id)
            self.sightings[test_id] -= sighting.count
            if sighting.name:
                _remove_row(self.sighted[sighting.name], (sighting.first, sid, test_id))
                self.first_named[test_id].remove(sid)
        self.sessions.pop(sid, None)
        for action in session.actions.get(self.screen, []):
            if action.ok and action.name:
                row = (action.ts, action.step_id, action)
                _remove_row(self.succeeded[action.name], row, _ROW_TIME)
            if not action.test_id:
                continue
            _drop(self.acted, action.test_id, sid)
            used.add(action.test_id)
            if action.ok:
                self.worked[action.test_id] -= 1
            elif action.error_code in MISSING:
                row = (action.ts, action.step_id, action)
                _remove_row(self.failures[action.test_id], row, _ROW_TIME)
        for test_id in used:
            for index in (self.last_used, self.first_used, self.latest_named):
                if test_id in index:
                    index[test_id].remove(sid)

    def touched(self, session: SessionFacts) -> set[str]:
        """The testIds a session's facts of this screen bear on: those it saw or acted on,
        every testId known under a name it saw or acted on (their identity may be that name),
        and every testId that worked here (what it saw may be what replaced one: `renames`)."""
        seen = session.seen.get(self.screen, {})
        actions = session.actions.get(self.screen, [])
        ids = set(seen) | {a.test_id for a in actions if a.test_id}
        names = {s.name for s in seen.values() if s.name} | {a.name for a in actions if a.name}
        for name in names:
            ids |= self.named.get(name, set())
        return ids | {test_id for test_id, n in self.worked.items() if n}

    def renames(self) -> dict[str, Rename]:
        """The testIds of this screen that newer ones replaced (`engine.records.renames`), each
        told by enough sessions (`outweighs`): computed once per change of the facts."""
        if self.known_renames is None or self.known_renames[0] != self.version:
            ids, retries = self._rename_facts()
            found = renames_on(self.screen, ids, retries)
            kept = {
                old: rename
                for old, rename in found.items()
                if outweighs(old, ids[old].last, rename.new, self)
            }
            self.known_renames = (self.version, kept)
        return self.known_renames[1]

    def sessions_after(self, test_id: str, since: int) -> set[str]:
        """The sessions that saw `test_id` on this screen, or acted on it and it worked, after
        `since` (epoch ms)."""
        found = {sid for sid, seen in self.seen.get(test_id, {}).items() if seen.last > since}
        for sid, actions in self.acted.get(test_id, {}).items():
            if any(a.ok and a.ts > since for a in actions):
                found.add(sid)
        return found

    def worked_in(self, test_id: str) -> set[str]:
        """The sessions in which an action on `test_id` worked on this screen."""
        return {
            s for s, actions in self.acted.get(test_id, {}).items() if any(a.ok for a in actions)
        }

    def _rename_facts(self) -> tuple[dict[str, Known], list[Retry]]:
        ids: dict[str, Known] = {}
        for test_id, used in self.last_used.items():
            last, first = used.best(), self.first_used[test_id].best()
            if last is None or first is None:
                continue
            role, name = self.identity(test_id)
            ids[test_id] = Known(first[0], last[0], self.sightings.get(test_id, 0), role, name)
        retries = []
        for test_id, misses in self.failures.items():
            if test_id not in ids:
                continue
            for _, _, miss in misses[_first_after(misses, ids[test_id].last) :]:
                later = self.sessions[miss.step_id.split("/", 1)[0]]
                retry = next((a for a in later if a.ts > miss.ts and a.tool == miss.tool), None)
                if retry is not None and retry.ok and retry.test_id:
                    retries.append(Retry(test_id, retry.test_id, retry.ts))
        return ids, retries

    def identity(self, test_id: str) -> tuple[str, str]:
        """The element a testId names, (role, name): the latest successful action's that named
        it, else its first sighting's (sessions in id order: the live writer and a rebuild
        must agree); ("", "") when nothing named it."""
        named = self.latest_named.get(test_id)
        first = self.first_named.get(test_id)
        found = (named and named.best()) or (first and first.best())
        return found[1] if found else ("", "")

    def first_success(self, test_id: str, after: int) -> Action | None:
        """The earliest action on `test_id` that worked after `after` (epoch ms)."""
        worked = [
            action
            for actions in self.acted.get(test_id, {}).values()
            for action in actions
            if action.ok and action.ts > after
        ]
        return min(worked, key=_ORDER, default=None)


def _extreme(index: dict[str, Extreme[Any]], test_id: str, *, largest: bool) -> Extreme[Any]:
    found = index.get(test_id)
    if found is None:
        found = index[test_id] = Extreme(largest=largest)
    return found


def _drop(index: dict[str, dict[str, T]], key: str, session_id: str) -> None:
    entries = index.get(key)
    if entries is not None:
        entries.pop(session_id, None)
        if not entries:
            del index[key]


def judge(test_id: str, facts: ScreenFacts) -> tuple[Action, str] | None:
    """When the successful actions on `test_id` no longer work: the action that works instead,
    with the evidence (`renamed` or `not-found`); None while they still work. The rules of the
    module docstring first, then a rename of the testId on this screen (`ScreenFacts.renames`:
    the first action that worked on the newer id)."""
    if not facts.worked.get(test_id):
        return None
    used = facts.last_used[test_id].best()
    assert used is not None  # a testId that worked was used
    since: int = used[0]
    if not facts.unique(test_id):
        role_name = facts.identity(test_id)
        misses = facts.failures.get(test_id, [])
        failed = [action for _, _, action in misses[_first_after(misses, since) :]]
        found = _renamed(test_id, role_name, since, facts) or _not_found(
            test_id, role_name, failed, facts
        )
        if found is not None and outweighs(test_id, since, found[0], facts):
            return found
    rename = facts.renames().get(test_id)
    successor = facts.first_success(rename.new, since) if rename else None
    return (successor, rename.evidence) if rename and successor else None


def outweighs(test_id: str, since: int, successor: Action | str, facts: ScreenFacts) -> bool:
    """Whether the evidence that `successor` (an action that worked, or a testId) replaced
    `test_id` after `since` comes from enough sessions to outweigh the sessions in which
    `test_id` worked: evidence from `MIN_SESSIONS` sessions always does; evidence from one
    session only against fewer than `MIN_SESSIONS` other sessions that worked with it. One
    session (a forged recording, or an agent that strayed onto another page) must not hide
    what several sessions show works. The evidence: the sessions that saw or used the
    successor after `since`, the successor's own, and those where `test_id` failed as not
    there after `since`."""
    evidence: set[str] = set()
    new_id = successor if isinstance(successor, str) else successor.test_id
    if isinstance(successor, Action):
        evidence.add(_session_of(successor.step_id))
    if new_id:
        evidence |= facts.sessions_after(new_id, since)
    misses = facts.failures.get(test_id, [])
    evidence |= {_session_of(miss.step_id) for _, _, miss in misses[_first_after(misses, since) :]}
    if len(evidence) >= MIN_SESSIONS:
        return True
    return len(facts.worked_in(test_id) - evidence) < MIN_SESSIONS


def _session_of(step_id: str) -> str:
    return step_id.split("/", 1)[0]


def _renamed(
    test_id: str, identity: tuple[str, str], since: int, facts: ScreenFacts
) -> tuple[Action, str] | None:
    """After `test_id` was last seen, the same element was observed at least
    `MIN_OBSERVATIONS` times under another testId, and an action on it worked there (reads
    only the sightings and successes after `since`)."""
    role, name = identity
    if not name:
        return None
    observations = 0
    sightings = facts.sighted.get(name, [])
    for _, sid, other in sightings[_first_after(sightings, since) :]:
        sighting = facts.seen[other][sid]
        if other != test_id and _same_element(role, name, sighting.role, name):
            observations += sighting.count
            if observations >= MIN_OBSERVATIONS:
                break
    if observations < MIN_OBSERVATIONS:
        return None
    successes = facts.succeeded.get(name, [])
    for _, _, action in successes[_first_after(successes, since) :]:
        if action.test_id != test_id and _same_element(role, name, action.role, name):
            return action, "renamed"
    return None


def _not_found(
    test_id: str, identity: tuple[str, str], failed: list[Action], facts: ScreenFacts
) -> tuple[Action, str] | None:
    """`failed`: the actions on `test_id` that failed as not there (`MISSING`) after it was last
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
