"""Recall links: which remembered step an agent followed, and that it worked (spec 002).

A serving process remembers, per session and in memory only, the targets it offered that
session: the targets of the search results it returned and of the priorKnowledge suggestions
it made (preferred and fallback targets). Searching writes nothing. When a later step of the
same session acts on one of those targets (click, type, wait_for) and works, the step's record
carries a recall link `{"stepId": <the memory>, "via": "search" | "priorKnowledge"}` in its
`recalled` list: the link is written with the acting step, in that session's folder, in the
same atomic file write, so it needs no second file to keep in step and `knowhow reindex`
reproduces it. Salience (`engine.query.salience`) is computed from these links at query time.

A memory is recalled at most once per session (following the same advice twice in one run is
one recall), and the most recent offer of a target wins (the result the agent just read).

The links are the server's own: a `recalled` list sent with a step (a client's claim that it
followed some memory) is dropped, never written. Salience ranks a memory above its twins, so
a list taken from the client would let eight throwaway sessions make any step look followed.
"""

import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.core import StepSummary
from engine.history.prior import PriorKnowledge, PriorTarget
from engine.records import (
    INTERACTION_TOOLS,
    RecallLink,
    StepRecord,
    StepTarget,
    selector_test_id,
    tool_action,
)

SEARCH = "search"
PRIOR_KNOWLEDGE = "priorKnowledge"
OFFERS_PER_SESSION = 1000
"""Targets remembered per session (oldest forgotten first)."""
MAX_SESSIONS = 64
"""Sessions remembered by one process (the least recently offered forgotten first)."""

TargetKey = tuple[str, ...]
"""`("testId", id)`, `("selector", css)` or `("a11y", role, name)` (role and name lowercased)."""


def a11y_key(role: str | None, name: str | None) -> TargetKey | None:
    if not role or not name or not name.strip():
        return None
    return ("a11y", role.strip().lower(), name.strip().lower())


def offered_keys(target: Mapping[str, object] | None) -> list[TargetKey]:
    """Keys of a result row's target (`testId`, `selector`, `role`, `name`)."""
    if not target:
        return []
    keys: list[TargetKey] = []
    test_id, selector = target.get("testId"), target.get("selector")
    if isinstance(test_id, str) and test_id:
        keys.append(("testId", test_id))
    if isinstance(selector, str) and selector:
        keys.append(("selector", selector))
    role, name = target.get("role"), target.get("name")
    hint = a11y_key(
        role if isinstance(role, str) else None, name if isinstance(name, str) else None
    )
    return [*keys, hint] if hint else keys


def action_keys(target: StepTarget) -> list[TargetKey]:
    """Keys of what a step acted on: its testId (also one named by an exact
    `[data-testid=…]` selector), its selector, its accessible role and name."""
    keys: list[TargetKey] = []
    test_id = target.testId or selector_test_id(target.selector)
    if test_id:
        keys.append(("testId", test_id))
    if target.selector:
        keys.append(("selector", target.selector))
    hint = a11y_key(target.a11yHint.role, target.a11yHint.name) if target.a11yHint else None
    return [*keys, hint] if hint else keys


def _prior_key(target: PriorTarget) -> TargetKey | None:
    if isinstance(target.value, str):
        return (target.type, target.value) if target.type in ("testId", "selector") else None
    return a11y_key(target.value.get("role"), target.value.get("name"))


OfferRow = tuple[str, str, list[TargetKey]]
"""(memory step id, via, the target's keys)."""


def result_offers(results: Iterable[StepSummary]) -> list[OfferRow]:
    """What a page of search results offers, best first: the targets of steps that worked
    (a remembered failure is a warning, not advice to follow)."""
    return [(r.stepId, SEARCH, offered_keys(r.target)) for r in results if r.target and r.ok]


def suggestion_offers(prior: PriorKnowledge) -> list[OfferRow]:
    """What priorKnowledge suggests, best first (then its later actions): each suggestion's
    preferred target and fallbacks."""
    offers: list[OfferRow] = []
    for suggestion in [*prior.suggestedNextActions, *prior.laterActions]:
        targets = [suggestion.preferredTarget, *suggestion.fallbackTargets]
        keys = [key for key in map(_prior_key, targets) if key is not None]
        offers.append((suggestion.stepId, PRIOR_KNOWLEDGE, keys))
    return offers


@dataclass(frozen=True, slots=True)
class Offer:
    memory: str
    """Step id of the remembered step the target came from."""
    via: str


class Offers:
    """The targets offered to each session, newest offer last; safe across worker threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._offers: OrderedDict[str, OrderedDict[TargetKey, Offer]] = OrderedDict()
        self._recalled: dict[str, set[str]] = {}

    def offer(self, session_id: str, offers: Iterable[OfferRow]) -> None:
        """Remember `(memory step id, via, target keys)` as offered to `session_id`, best first:
        a better-ranked offer of the same target within one call wins."""
        with self._lock:
            known = self._offers.pop(session_id, None) or OrderedDict()
            self._offers[session_id] = known
            for memory, via, keys in reversed(list(offers)):
                for key in keys:
                    known.pop(key, None)
                    known[key] = Offer(memory, via)
            while len(known) > OFFERS_PER_SESSION:
                known.popitem(last=False)
            while len(self._offers) > MAX_SESSIONS:
                forgotten, _ = self._offers.popitem(last=False)
                self._recalled.pop(forgotten, None)

    def links(self, record: StepRecord) -> list[RecallLink]:
        """The recall links of a step about to be written: an interaction that worked, on a
        target offered to its session by a memory of another session, not yet recalled."""
        target = record.tool.target
        if not record.outcome.ok or target is None:
            return []
        if tool_action(record.tool.name) not in INTERACTION_TOOLS:
            return []
        session_id = record.sessionId
        with self._lock:
            known = self._offers.get(session_id)
            if not known:
                return []
            recalled = self._recalled.setdefault(session_id, set())
            links: list[RecallLink] = []
            for key in action_keys(target):
                offer = known.get(key)
                if offer is None or offer.memory in recalled:
                    continue
                if offer.memory.split("/", 1)[0] == session_id:
                    continue  # a session repeating itself recalls nothing
                recalled.add(offer.memory)
                links.append(RecallLink(stepId=offer.memory, via=offer.via))
            return links


def with_recalls(record: StepRecord, offers: Offers) -> StepRecord:
    """`record` with the recall links it earns from what this server offered its session,
    and no others (a `recalled` list it came with is dropped)."""
    links = offers.links(record)
    if not links and record.recalled is None:
        return record
    return record.model_copy(update={"recalled": links or None})
