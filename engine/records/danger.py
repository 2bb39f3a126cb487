"""Whether a control destroys something, told from what the records say it does.

Knowledge is shared, so one recording can put any control in front of every agent: a button
that wipes the wallet, recorded under the accessible name "Send", must not look like a Send
button. Its name alone says nothing, so danger is read from everything a record tells of the
control, each a kind of evidence:

- `id`: its testId or selector holds a destructive word (`wipe-wallet`, `resetAccount`);
- `name`: the name it was acted on by holds one ("Erase all data");
- `leads-to`: the screen it led to (its name, or the route of its URL) holds one, when the
  action changed the screen (`#/reset-wallet`);
- `confirmation`: what the action opened says it cannot be undone ("This cannot be undone",
  "permanently", "irreversible"): newly shown text, not what the screen showed before;
- `around`: the text of the elements beside it on the screen before (testIds that share its
  id's stem, `wipe-warning` beside `wipe-confirm`) holds a destructive word or says it cannot
  be undone.

The destructive words, in any form: delete, remove, reset, revoke, disconnect, wipe, erase,
forget, destroy, clear, purge, uninstall, deactivate, terminate, discard. A goal or query holding
one asks for destruction (`asks_for_destruction`).
"""

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache

from analyzers import split_identifier, stem, tokenize
from engine.core import OBSERVATIONS_CACHED, ByIdentity

DESTRUCTIVE_WORDS = (
    *("delete", "remove", "removal", "reset", "revoke", "revocation", "disconnect"),
    *("wipe", "wiping", "wiped", "erase", "forget", "destroy", "destruction", "clear", "purge"),
    *("uninstall", "deactivate", "terminate", "discard"),
)
DESTRUCTIVE_STEMS = frozenset(stem(word) for word in DESTRUCTIVE_WORDS)
"""The stems of the destructive words (`stem("revocation")` is not `stem("revoke")`)."""
_IRREVERSIBLE = re.compile(
    r"can(?:not|'t|’t| not) be (?:undone|reversed|recovered)|irreversibl|permanent"
    r"|no way to (?:undo|recover)|lose access",
    re.IGNORECASE,
)
"""What a confirmation says of an action that destroys something."""
ID = "id"
NAME = "name"
LEADS_TO = "leads-to"
CONFIRMATION = "confirmation"
AROUND = "around"
EVIDENCE = (ID, NAME, LEADS_TO, CONFIRMATION, AROUND)
"""Every kind of evidence, in the order they are reported."""


@lru_cache(maxsize=16_384)
def words(text: str) -> frozenset[str]:
    """The stems of a text's words (identifiers split into theirs; cached: the same names and
    testIds are compared on every call)."""
    return frozenset(
        stem(w) for token in tokenize(text) for w in split_identifier(token) or [token]
    )


@lru_cache(maxsize=8_192)
def says_destructive(text: str) -> bool:
    """Whether a text or identifier holds a destructive word (cached: the same ids, names and
    screens recur on every step)."""
    return bool(text) and not words(text).isdisjoint(DESTRUCTIVE_STEMS)


@lru_cache(maxsize=8_192)
def says_irreversible(text: str) -> bool:
    """Whether a text says an action cannot be undone."""
    return bool(text) and _IRREVERSIBLE.search(text) is not None


def asks_for_destruction(text: str | None) -> bool:
    """Whether a goal or query asks to destroy something (then a destructive target is what
    it wants, not a trap)."""
    return says_destructive(text or "")


def target_danger(test_id: str | None, selector: str | None, name: str | None) -> list[str]:
    """The evidence a target's own description gives (`id`, `name`)."""
    found = []
    if says_destructive(test_id or "") or says_destructive(selector or ""):
        found.append(ID)
    if says_destructive(name or ""):
        found.append(NAME)
    return found


def action_danger(
    test_id: str | None,
    selector: str | None,
    name: str | None,
    *,
    led_to: str | None = None,
    opened: Iterable[str] = (),
    before: Mapping[str, str] | None = None,
) -> list[str]:
    """Every kind of evidence that the action destroys something (empty: none), in `EVIDENCE`
    order. `led_to`: the screen (and route) it changed to, None when it stayed; `opened`: the
    texts shown after it that were not shown before; `before`: testId -> text of the screen it
    was taken on."""
    found = target_danger(test_id, selector, name)
    if led_to and says_destructive(led_to):
        found.append(LEADS_TO)
    if any(says_irreversible(text) for text in opened):
        found.append(CONFIRMATION)
    if test_id and before and _beside(test_id, _warnings(before)):
        found.append(AROUND)
    return found


def _warning_texts(shown: Mapping[str, str]) -> dict[str, str]:
    """The testIds of a screen whose text holds a destructive word or says an action cannot be
    undone (most screens: none)."""
    return {
        test_id: text
        for test_id, text in shown.items()
        if text and (says_destructive(text) or says_irreversible(text))
    }


_warnings = ByIdentity(_warning_texts, OBSERVATIONS_CACHED)
"""(derived once per screen: the steps taken on it share its testId texts, never changed)"""


def _beside(test_id: str, shown: Mapping[str, str]) -> list[str]:
    """The texts of the testIds of `shown` beside `test_id`: those sharing its id without its
    last part (`wipe-warning` and `wipe-confirm` share `wipe`), itself left out."""
    parts = _id_parts(test_id)
    if len(parts) < 2:
        return []
    stem_parts = parts[:-1]
    return [
        text
        for other, text in shown.items()
        if other != test_id and text and _id_parts(other)[: len(stem_parts)] == stem_parts
    ]


@lru_cache(maxsize=8_192)
def _id_parts(test_id: str) -> tuple[str, ...]:
    """(cached: a screen's testIds recur on every step taken on it)"""
    return tuple(split_identifier(test_id))
