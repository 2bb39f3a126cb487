"""Why a remembered target deserves a second look before an agent acts on it.

Knowledge is shared between agents, so one recording can steer every agent that reads it: a
click on a wallet-wiping button recorded under the accessible name "Send" would otherwise be
suggested on every screen showing a Send button. Two things are checked, from what the index
holds and what the agent sees now:

- `name`: the element is shown now under its testId, and the text it shows shares no word
  with the name it was remembered under (stems and the synonym groups of `analyzers` count as
  shared). A testId's own words are not compared with its name: 13 of the 57 actions of the
  eval vocabulary (`vocab.json`, MetaMask's own testIds) share none with theirs, e.g.
  `bridge-cta-button` "Swap" and `confirm-btn` "Connect".
- `destructive`: what the records say the control does destroys something
  (`engine.records.danger`: its id, its name, the screen it led to, the confirmation it opened,
  the text beside it), and the goal (of priorKnowledge's session, or a search's query) does not
  ask for that.

A cautioned suggestion is never the first one (`engine.history.prior`), and a cautioned search
result is ranked after those that are not (`engine.search`).
"""

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from functools import cache

from analyzers import DEFAULT_SYNONYM_GROUPS, stem
from engine.core import Caution
from engine.index import PayloadTarget
from engine.records import EVIDENCE, asks_for_destruction, target_danger, words

NAME = "name"
DESTRUCTIVE = "destructive"
_MESSAGES = {
    NAME: "the element shows another name now than the one it was remembered under",
    DESTRUCTIVE: "it looks destructive ({evidence}) and the goal does not ask for that",
}
_EVIDENCE_WORDS = {
    "id": "its testId or selector",
    "name": "its name",
    "leads-to": "the screen it leads to",
    "confirmation": "the confirmation it opens",
    "around": "the text beside it",
}
"""How a caution names each kind of evidence (knowhow's words, never recorded text)."""


def caution_for(
    target: PayloadTarget,
    goal: str | None,
    shown_now: Mapping[str, str],
    danger: Sequence[str] = (),
) -> Caution | None:
    """Why `target` needs a second look (None when it does not); `shown_now` maps the testIds
    on the screen now to the text each shows; `danger` is the evidence the index found that
    the action destroys something (`engine.records.action_danger`), to which the target's own
    id and name are added."""
    reasons = []
    test_id, name = target.get("testId"), target.get("name")
    shown = shown_now.get(test_id) if test_id else None
    if name and shown and not agree(words(name), words(shown)):
        reasons.append(NAME)
    found = set(danger) | set(target_danger(test_id, target.get("selector"), name))
    if found and not asks_for_destruction(goal):
        reasons.append(DESTRUCTIVE)
    if not reasons:
        return None
    evidence = ", ".join(_EVIDENCE_WORDS[kind] for kind in EVIDENCE if kind in found)
    message = "; ".join(_MESSAGES[r].format(evidence=evidence) for r in reasons)
    return Caution(reasons=reasons, message=message[:1].upper() + message[1:])


def agree(one: AbstractSet[str], other: AbstractSet[str]) -> bool:
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
