"""Supersede decisions on file: `<sessionId>/superseded.json`, written by detection or by hand.

The files are the truth: indexing a session reads its `superseded.json` and flags those steps
(`knowhow reindex` reproduces every flag). Detection (`engine.records.supersede`) runs in the index
writer after a commit, over the facts of every session (`FactsLedger`, decoded once per writer
from the manifest): a rebuild judges every testId of every screen; the live writer judges
again only the testIds a batch touched, which gives the same decisions (a property test checks
it). A session whose detected decisions changed gets its file rewritten, which changes its
signature, so the next batch re-indexes it with the new flags. Judging the same facts gives
the same decisions, so this settles after one round.

Explicit decisions (`supersede`, i.e. `mm_knowledge_supersede`) are never replaced by
detection, and only they can be withdrawn by hand (`restore_step`); they are checked first: both
steps exist, a step never supersedes itself, and no chain of decisions may lead back to the step
(a cycle would hide both for good).
"""

import contextlib
import fcntl
import os
from collections.abc import Iterator, Mapping

from engine.core import (
    InvalidInput,
    KnowhowError,
    NotFound,
    Result,
    StepInput,
    SupersededByStep,
    SupersedeInput,
)
from engine.index.documents import SessionContext, resolve_target
from engine.index.generations import Manifest
from engine.records import (
    DECISIONS_FILE,
    Action,
    Detected,
    KnowledgeStore,
    Planner,
    ScreenFacts,
    SessionFacts,
    SupersededBy,
    Supersession,
    changed_screens,
    decode_all,
    judge,
    now_iso,
    plan,
    superseded,
)

EXPLICIT = "explicit"
DETECTED = "detected"
LOCK_FILE = ".decisions.lock"
"""In the knowledge root: held while a `superseded.json` is read, changed and written back."""
MAX_CHAIN = 1000
"""How far the cycle check follows supersededBy links (a longer chain is refused)."""


class FactsLedger:
    """The supersede facts of every indexed session, held by the index writer, and each
    screen's facts indexed by testId and name (`ScreenFacts`, built on first use and kept up
    to date), so that the live writer judges again only the testIds a batch touched."""

    def __init__(self, facts: dict[str, SessionFacts]) -> None:
        self.facts: dict[str, SessionFacts] = {}
        self.by_screen: dict[str, set[str]] = {}
        """screen -> the sessions whose facts mention it."""
        self.screens: dict[str, ScreenFacts] = {}
        self.pending: dict[str, set[str]] = {}
        """screen -> testIds to judge again (what `update` changed since `take_pending`)."""
        self.changed: dict[str, set[str]] = {}
        """screen -> sessions whose facts there changed since the screen was last re-planned
        (`write_detected` compares only their decisions for a testId whose verdict stands)."""
        for session_id, session in facts.items():
            self._store(session_id, session)

    @classmethod
    def load(cls, manifest: Manifest) -> "FactsLedger":
        return cls(decode_all(manifest.facts()))

    def update(self, session_id: str, facts: SessionFacts | None) -> None:
        """A session's facts as indexed now (None: it was deleted)."""
        old = self.facts.get(session_id)
        for screen in changed_screens(old, facts):
            view = self.screen(screen)
            self.changed.setdefault(screen, set()).add(session_id)
            touched = self.pending.setdefault(screen, set())
            if old is not None:
                touched |= view.touched(old)
                view.remove(old)
            if facts is not None:
                view.add(facts)
                touched |= view.touched(facts)
        self._store(session_id, facts)

    def _store(self, session_id: str, facts: SessionFacts | None) -> None:
        old = self.facts.pop(session_id, None)
        for screen in old.screens() if old else ():
            self.by_screen[screen].discard(session_id)
        if facts is not None:
            self.facts[session_id] = facts
            for screen in facts.screens():
                self.by_screen.setdefault(screen, set()).add(session_id)

    def screen(self, screen: str) -> ScreenFacts:
        """The screen's facts from every session, indexed (built on first use)."""
        view = self.screens.get(screen)
        if view is None:
            view = self.screens[screen] = ScreenFacts(screen)
            for session_id in self.by_screen.get(screen, set()):
                view.add(self.facts[session_id], bulk=True)
            view.settle()
        return view

    def take_pending(self) -> dict[str, set[str]]:
        pending, self.pending = self.pending, {}
        return pending

    def add_pending(self, scope: Mapping[str, set[str]]) -> None:
        """Judge these again too (a planning that failed, or a ledger being replaced)."""
        for screen, test_ids in scope.items():
            self.pending.setdefault(screen, set()).update(test_ids)


@contextlib.contextmanager
def decisions_lock(store: KnowledgeStore) -> Iterator[None]:
    """One read-modify-write of decision files at a time, across threads and processes: the
    live writer's detection and `mm_knowledge_supersede` (any server, or the CLI) both rewrite
    `superseded.json`, and without it the later write drops what the earlier one added."""
    fd = os.open(store.root / LOCK_FILE, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the flock


@contextlib.contextmanager
def decisions_to_change(
    store: KnowledgeStore, session_id: str
) -> Iterator[dict[str, Supersession]]:
    """A session's decisions by hand: read under the lock, written back (atomically) when the
    block ends without an error. An unreadable file is never rewritten: that would drop every
    decision it holds."""
    with decisions_lock(store):
        decisions, unreadable = store.read_decisions(session_id)
        if unreadable is not None:
            raise KnowhowError(
                f"stepId: the session's {DECISIONS_FILE} cannot be read ({unreadable.reason}); "
                "fix or remove it, then try again"
            )
        yield decisions
        store.write_decisions(session_id, decisions)


def _decision(detected: Detected) -> Supersession:
    by = detected.by
    return Supersession(
        supersededBy=SupersededBy(stepId=by.step_id, target=by.target, timestamp=by.timestamp),
        supersededAt=by.timestamp,
        source=DETECTED,
        evidence=detected.evidence,
    )


def write_detected(
    store: KnowledgeStore,
    ledger: FactsLedger,
    scope: Mapping[str, set[str]] | None = None,
    planner: Planner | None = None,
) -> dict[str, set[str]]:
    """Judge the testIds of `scope` (screen -> testIds; every screen and testId when None)
    again and rewrite the decision files whose detected part changed; returns those sessions
    and, per session, the steps whose flag changed. `planner` (with no `scope`): every session
    of the ledger already added to it (a bulk build's `supersede.Planner`)."""
    planned: dict[str, dict[str, Detected]] = {}
    in_scope: dict[str, list[list[Action]]] = {}
    """session id -> its actions judged again (their detected decisions are replaced)."""
    verdicts: list[tuple[ScreenFacts, str, tuple[str, str] | None]] = []
    if scope is None:
        found = planner.detected() if planner is not None else plan(ledger.facts.values())
        for session_id, facts in ledger.facts.items():
            in_scope[session_id] = list(facts.actions.values())
    else:
        found = []
        for screen, test_ids in scope.items():
            view = ledger.screen(screen)
            changed_here = ledger.changed.get(screen, set())
            for test_id in sorted(test_ids):
                verdict = judge(test_id, view)
                key = (verdict[0].step_id, verdict[1]) if verdict else None
                acted = view.acted.get(test_id, {})
                if test_id in view.verdicts and view.verdicts[test_id] == key:
                    # the verdict stands: only sessions whose facts changed may disagree
                    sessions = sorted(s for s in changed_here if s in acted)
                else:
                    sessions = sorted(acted)
                for session_id in sessions:
                    in_scope.setdefault(session_id, []).append(acted[session_id])
                if verdict is not None:
                    found += superseded((acted[s] for s in sessions), verdict)
                verdicts.append((view, test_id, key))
    for detected in found:
        planned.setdefault(detected.step_id.split("/", 1)[0], {})[detected.step_id] = detected
    changed: dict[str, set[str]] = {}
    for session_id in sorted(in_scope):
        facts = ledger.facts[session_id]
        if not facts.detected and session_id not in planned:
            continue  # nothing detected before, nothing now
        steps = {a.step_id for actions in in_scope[session_id] for a in actions}
        before = {s: by for s, by in facts.detected.items() if s in steps}
        now = {s: d.by.step_id for s, d in planned.get(session_id, {}).items()}
        if before == now:
            continue
        with decisions_lock(store):
            decisions, unreadable = store.read_decisions(session_id)
            if unreadable is not None:
                continue  # reported as a skip; never overwrite what we cannot read
            for step_id in steps:
                stem = step_id.split("/", 1)[1]
                if stem in decisions and decisions[stem].source == DETECTED:
                    del decisions[stem]
            for step_id, decided in planned.get(session_id, {}).items():
                stem = step_id.split("/", 1)[1]
                if stem not in decisions:
                    decisions[stem] = _decision(decided)
            store.write_decisions(session_id, decisions)
        facts.detected = {**{s: b for s, b in facts.detected.items() if s not in steps}, **now}
        changed[session_id] = {s for s in before.keys() | now.keys() if before.get(s) != now.get(s)}
    for view, test_id, key in verdicts:  # every session now agrees with them
        view.verdicts[test_id] = key
    for screen in scope or ():
        ledger.changed.pop(screen, None)
    return changed


def _successor(store: KnowledgeStore, step_id: str) -> str | None:
    session_id, _, stem = step_id.partition("/")
    decisions, _ = store.read_decisions(session_id)
    decision = decisions.get(stem)
    if decision is None or decision.supersededBy is None:
        return None
    return decision.supersededBy.stepId


def _describe(store: KnowledgeStore, step_id: str) -> SupersededBy:
    """A successor as results show it: its id, what it acted on and when."""
    session_id, _, stem = step_id.partition("/")
    try:
        record = store.read_step(session_id, f"{stem}.json")
    except (OSError, ValueError) as exc:
        raise InvalidInput("supersededBy", f"step {step_id!r} cannot be read: {exc}") from None
    resolved = resolve_target(record, SessionContext())  # as detected successors show it
    described = (resolved.describe() or None) if resolved else None
    return SupersededBy(stepId=step_id, target=described, timestamp=record.timestamp)


def supersede(
    store: KnowledgeStore, step_id: str, superseded_by: str | None, reason: str | None
) -> Supersession:
    """Mark `step_id` superseded by hand (by `superseded_by`, or for `reason`); nothing is
    written when the input is wrong."""
    if superseded_by is None and not reason:
        raise InvalidInput("supersededBy", "give supersededBy (a step id) or a reason")
    if not store.has_step(step_id):
        raise NotFound(f"stepId: no step {step_id!r}; search to find step ids")
    by = None
    if superseded_by is not None:
        if superseded_by == step_id:
            raise InvalidInput("supersededBy", "a step cannot supersede itself")
        if not store.has_step(superseded_by):
            raise NotFound(f"supersededBy: no step {superseded_by!r}")
        link: str | None = superseded_by
        for _ in range(MAX_CHAIN):
            link = _successor(store, link) if link else None
            if link is None:
                break
            if link == step_id:
                raise InvalidInput(
                    "supersededBy",
                    f"{superseded_by!r} is itself superseded, through a chain, by {step_id!r}: "
                    "that would form a cycle",
                )
        else:
            raise InvalidInput("supersededBy", f"chain of supersessions longer than {MAX_CHAIN}")
        by = _describe(store, superseded_by)
    decision = Supersession(supersededBy=by, supersededAt=now_iso(), source=EXPLICIT, reason=reason)
    session_id, _, stem = step_id.partition("/")
    with decisions_to_change(store, session_id) as decisions:
        decisions[stem] = decision
    return decision


class Superseded(Result):
    """What `mm_knowledge_supersede` recorded: the step is hidden from search, last and
    priorKnowledge once the live index has re-indexed its session (within a second)."""

    stepId: str
    isSuperseded: bool = True
    supersededBy: SupersededByStep | None = None
    supersededAt: str
    reason: str | None = None
    source: str


def supersede_step(store: KnowledgeStore, request: SupersedeInput) -> Superseded:
    """`supersede` for a validated tool or CLI request."""
    decision = supersede(store, request.stepId, request.supersededBy, request.reason)
    by = decision.supersededBy
    return Superseded(
        stepId=request.stepId,
        supersededBy=SupersededByStep(**by.model_dump(exclude_none=True)) if by else None,
        supersededAt=decision.supersededAt,
        reason=decision.reason,
        source=decision.source,
    )


class Restored(Result):
    """A step whose explicit supersession was withdrawn: search, last and priorKnowledge offer
    it again once the live index has re-indexed its session (within a second)."""

    stepId: str
    isSuperseded: bool = False
    withdrawn: str
    """When the withdrawn decision was made (its `supersededAt`)."""


def restore_step(store: KnowledgeStore, request: StepInput) -> Restored:
    """Withdraw a decision made by hand (`supersede`), read and rewritten under the same lock.
    A detected decision is refused: the evidence that made it would make it again; a later
    session that uses the old target successfully is what withdraws it."""
    if not store.has_step(request.stepId):
        raise NotFound(f"stepId: no step {request.stepId!r}; search to find step ids")
    session_id, _, stem = request.stepId.partition("/")
    with decisions_to_change(store, session_id) as decisions:
        decision = decisions.get(stem)
        if decision is None:
            raise InvalidInput("stepId", f"{request.stepId!r} is not superseded")
        if decision.source != EXPLICIT:
            raise InvalidInput(
                "stepId",
                f"{request.stepId!r} was superseded by detection, from later sessions' evidence; "
                "it is restored when a later session uses its target successfully",
            )
        del decisions[stem]
    return Restored(stepId=request.stepId, withdrawn=decision.supersededAt)
