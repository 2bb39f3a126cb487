"""Why a remembered target deserves a second look before an agent acts on it.

Knowledge is shared between agents, so one recording can steer every agent that reads it: a
click on `delete-account-confirm` recorded under the accessible name "Send" would otherwise be
suggested on every screen showing a Send button. Two things are checked, from what the index
holds and what the agent sees now:

- `name`: the element is shown now under its testId, and the text it shows shares no word
  with the name it was remembered under (stems and the synonym groups of `analyzers` count as
  shared). A testId's own words are not compared with its name: 13 of the 57 actions of the
  eval vocabulary (`vocab.json`, MetaMask's own testIds) share none with theirs, e.g.
  `bridge-cta-button` "Swap" and `confirm-btn` "Connect".
- `destructive`: the target's testId, selector or name holds a destructive word (delete,
  remove, reset, revoke, disconnect, in any form) and the goal (of priorKnowledge's session,
  or a search's query) holds none.

A cautioned suggestion is never the first one (`engine.history.prior`), and a cautioned search
result is ranked after those that are not (`engine.search`).
"""

from collections.abc import Mapping
from functools import cache, lru_cache

from analyzers import DEFAULT_SYNONYM_GROUPS, split_identifier, stem, tokenize
from engine.core import Caution
from engine.index import PayloadTarget

DESTRUCTIVE_STEMS = frozenset(
    stem(word) for word in ("delete", "remove", "removal", "reset", "revoke", "revocation")
) | {"disconnect"}
"""The stems of the destructive words (`stem("revocation")` is not `stem("revoke")`)."""
NAME = "name"
DESTRUCTIVE = "destructive"
_MESSAGES = {
    NAME: "the element shows another name now than the one it was remembered under",
    DESTRUCTIVE: "it looks destructive and the goal does not ask for that",
}


def caution_for(
    target: PayloadTarget, goal: str | None, shown_now: Mapping[str, str]
) -> Caution | None:
    """Why `target` needs a second look (None when it does not); `shown_now` maps the testIds
    on the screen now to the text each shows."""
    reasons = []
    test_id, name = target.get("testId"), target.get("name")
    shown = shown_now.get(test_id) if test_id else None
    if name and shown and not agree(words(name), words(shown)):
        reasons.append(NAME)
    if is_destructive(target) and not asks_for_destruction(goal):
        reasons.append(DESTRUCTIVE)
    if not reasons:
        return None
    return Caution(reasons=reasons, message="; ".join(_MESSAGES[r] for r in reasons).capitalize())


def is_destructive(target: PayloadTarget) -> bool:
    return _destructive(
        target.get("testId") or "", target.get("selector") or "", target.get("name") or ""
    )


@lru_cache(maxsize=4_096)
def _destructive(test_id: str, selector: str, name: str) -> bool:
    """(cached: a page of search results, and every search, meets the same few targets)"""
    found = {stem(w) for value in (test_id, selector) for w in split_identifier(value)}
    found |= words(name)
    return not found.isdisjoint(DESTRUCTIVE_STEMS)


@lru_cache(maxsize=1_024)
def asks_for_destruction(goal: str | None) -> bool:
    """(cached: a search asks it of its query once per result)"""
    return bool(goal) and not words(goal or "").isdisjoint(DESTRUCTIVE_STEMS)


def words(text: str) -> set[str]:
    """The stems of a text's words (identifiers split into theirs)."""
    return {stem(w) for token in tokenize(text) for w in split_identifier(token) or [token]}


def agree(one: set[str], other: set[str]) -> bool:
    """Whether two word sets name the same thing: a shared stem or synonym."""
    synonyms = _synonyms()
    return not one.isdisjoint(other) or any(
        not synonyms.get(w, frozenset()).isdisjoint(other) for w in one
    )


@cache
def _synonyms() -> dict[str, frozenset[str]]:
    table: dict[str, frozenset[str]] = {}
    for group in DEFAULT_SYNONYM_GROUPS:
        stems = frozenset(stem(w) for w in group)
        for member in stems:
            table[member] = table.get(member, frozenset()) | stems
    return table
