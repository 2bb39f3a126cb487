"""Supersede decisions on file: `<sessionId>/superseded.json`, written by detection or by hand.

The files are the truth: indexing a session reads its `superseded.json` and flags those steps
(`knowhow reindex` reproduces every flag). Detection (`engine.supersede.plan`) runs in the
index writer after a commit, over the facts of every session (`FactsLedger`, decoded once per
writer from the manifest); a session whose detected decisions changed gets its file rewritten,
which changes its signature, so the next batch re-indexes it with the new flags. Re-planning
the same facts gives the same decisions, so this settles after one round.

Explicit decisions (`supersede`, i.e. `mm_knowledge_supersede`) are never replaced by
detection; they are checked first: both steps exist, a step never supersedes itself, and no
chain of decisions may lead back to the step (a cycle would hide both for good).
"""

import contextlib
import fcntl
import os
from collections.abc import Iterable, Iterator

from engine.documents import SessionContext, resolve_target
from engine.errors import InvalidInput, KnowhowError, NotFound
from engine.index import Manifest
from engine.inputs import SupersedeInput
from engine.models import SupersededBy, Supersession, now_iso
from engine.results import Result, SupersededByStep
from engine.store import DECISIONS_FILE, KnowledgeStore
from engine.supersede import Detected, SessionFacts, decode_all, plan

EXPLICIT = "explicit"
DETECTED = "detected"
LOCK_FILE = ".decisions.lock"
"""In the knowledge root: held while a `superseded.json` is read, changed and written back."""
MAX_CHAIN = 1000
"""How far the cycle check follows supersededBy links (a longer chain is refused)."""


class FactsLedger:
    """The supersede facts of every indexed session, held by the index writer."""

    def __init__(self, facts: dict[str, SessionFacts]) -> None:
        self.facts = facts

    @classmethod
    def load(cls, manifest: Manifest) -> "FactsLedger":
        return cls(decode_all(manifest.facts()))

    def update(self, session_id: str, facts: SessionFacts | None) -> None:
        if facts is None:
            self.facts.pop(session_id, None)
        else:
            self.facts[session_id] = facts


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


def _decision(detected: Detected) -> Supersession:
    by = detected.by
    return Supersession(
        supersededBy=SupersededBy(stepId=by.step_id, target=by.target, timestamp=by.timestamp),
        supersededAt=by.timestamp,
        source=DETECTED,
        evidence=detected.evidence,
    )


def write_detected(
    store: KnowledgeStore, ledger: FactsLedger, screens: Iterable[str] | None = None
) -> dict[str, set[str]]:
    """Re-plan `screens` (every screen when None) and rewrite the decision files whose detected
    part changed; returns those sessions and, per session, the steps whose flag changed."""
    wanted = None if screens is None else set(screens)
    planned: dict[str, dict[str, Detected]] = {}
    for found in plan(ledger.facts.values(), wanted):
        planned.setdefault(found.step_id.split("/", 1)[0], {})[found.step_id] = found
    changed: dict[str, set[str]] = {}
    for session_id, facts in ledger.facts.items():
        in_scope = {
            a.step_id
            for screen, actions in facts.actions.items()
            if wanted is None or screen in wanted
            for a in actions
        }
        before = {s: by for s, by in facts.detected.items() if s in in_scope}
        now = {s: d.by.step_id for s, d in planned.get(session_id, {}).items()}
        if before == now:
            continue
        with decisions_lock(store):
            decisions, unreadable = store.read_decisions(session_id)
            if unreadable is not None:
                continue  # reported as a skip; never overwrite what we cannot read
            for step_id in in_scope:
                stem = step_id.split("/", 1)[1]
                if stem in decisions and decisions[stem].source == DETECTED:
                    del decisions[stem]
            for step_id, found in planned.get(session_id, {}).items():
                stem = step_id.split("/", 1)[1]
                if stem not in decisions:
                    decisions[stem] = _decision(found)
            store.write_decisions(session_id, decisions)
        facts.detected = {**{s: b for s, b in facts.detected.items() if s not in in_scope}, **now}
        changed[session_id] = {s for s in before.keys() | now.keys() if before.get(s) != now.get(s)}
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
    with decisions_lock(store):
        decisions, unreadable = store.read_decisions(session_id)
        if unreadable is not None:  # rewriting it would drop every decision it holds
            raise KnowhowError(
                f"stepId: the session's {DECISIONS_FILE} cannot be read ({unreadable.reason}); "
                "fix or remove it, then try again"
            )
        decisions[stem] = decision
        store.write_decisions(session_id, decisions)
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
