"""Which testIds of a screen were replaced by which: a rename, told from what sessions saw.

A testId is renamed on a screen when it stops being seen there and a newer one takes its place:
the newer id was first seen there only after the old one was last seen or worked, at least
`MIN_SIGHTINGS` times, and it is the old one's counterpart by one of these, strongest first:

- **a retry**: an action on the old id failed because its element was not there, and the
  session's next action of the same kind on that screen worked on the newer id;
- **the same element**: both show the same visible name (and no different role);
- **the same parts**: both ids share a part that names the element, not its kind
  (`create-password-new` → `create-password-new-input`; `button`, `input`, `btn` … do not
  count), as renames mostly keep what the element is about.

Sessions simply stop using an old id: most renames leave no failure behind, so the last two
rules read only sightings. Each old id gets at most one successor on a screen (a page-wide
rename gives one old id several, one per screen); a newer id takes one old id, or several
that are its counterpart equally well (twelve word fields replaced by one text area). Pure:
the same facts give the same renames.
"""

from collections.abc import Iterable
from dataclasses import dataclass

from analyzers import split_identifier

MIN_SIGHTINGS = 2
"""Sightings of a newer id before it can stand for an old one (one can be a transient state)."""
KIND_WORDS = frozenset(
    {
        *("button", "btn", "input", "field", "icon", "link", "label", "text", "item", "element"),
        *("container", "wrapper", "page", "modal", "section", "list", "box", "el", "div", "span"),
    }
)
"""Parts of an id that name the element's kind or the page's markup, not which element it is."""
RETRY, SAME_ELEMENT, SAME_PARTS = 3, 2, 1
"""How strongly a pairing says the newer id is the old one's counterpart (higher first)."""


@dataclass(frozen=True, slots=True)
class Rename:
    """On `screen`, `old` became `new` (first seen there, or worked, at `since`, epoch ms)."""

    screen: str
    old: str
    new: str
    since: int
    evidence: str
    """`not-found` (a failed action retried on the new id) or `renamed` (by sightings)."""


@dataclass(frozen=True, slots=True)
class Retry:
    """An action on `old` that failed as not there at `ts`, retried on `new`, which worked."""

    old: str
    new: str
    ts: int


@dataclass(frozen=True, slots=True)
class Known:
    """What a screen's sessions tell of one of its testIds."""

    first: int
    """First time it was seen there (or worked, if never seen)."""
    last: int
    """Last time it was seen there or worked."""
    sightings: int
    role: str
    name: str


def renames_on(screen: str, ids: dict[str, Known], retries: Iterable[Retry]) -> dict[str, Rename]:
    """The renames of one screen (old id -> its rename), from what is known of its testIds
    and the retries seen there."""
    candidates: list[tuple[int, float, int, str, str]] = []
    """(strength, likeness, -gap, old, new), best first once sorted."""
    for retry in retries:
        if retry.old in ids and retry.new != retry.old and retry.ts > ids[retry.old].last:
            candidates.append((RETRY, 1.0, 0, retry.old, retry.new))
    newer = [(tid, k) for tid, k in ids.items() if k.sightings >= MIN_SIGHTINGS]
    for old, was in ids.items():
        for new, now in newer:
            if new == old or now.first <= was.last:
                continue
            strength, likeness = _counterpart(old, was, new, now)
            if strength:
                candidates.append((strength, likeness, was.last - now.first, old, new))
    candidates.sort(reverse=True)
    found: dict[str, Rename] = {}
    taken: dict[str, tuple[int, float]] = {}
    """newer id -> how well it matched the first old id it took."""
    for strength, likeness, _, old, new in candidates:
        if old in found or taken.get(new, (strength, likeness)) != (strength, likeness):
            continue
        taken[new] = (strength, likeness)
        evidence = "not-found" if strength == RETRY else "renamed"
        since = ids[new].first if new in ids else ids[old].last
        found[old] = Rename(screen, old, new, since, evidence)
    return found


def _counterpart(old: str, was: Known, new: str, now: Known) -> tuple[int, float]:
    """How surely `new` is `old`'s counterpart by sightings (0: it is not), and how alike the
    ids are (to tell candidates of one strength apart)."""
    old_parts, new_parts = _parts(old), _parts(new)
    shared = old_parts & new_parts
    likeness = len(shared) / len(old_parts | new_parts) if shared else 0.0
    if was.name and was.name == now.name and (not was.role or not now.role or was.role == now.role):
        return SAME_ELEMENT, likeness
    return (SAME_PARTS, likeness) if shared else (0, 0.0)


def _parts(test_id: str) -> frozenset[str]:
    return frozenset(
        part
        for part in split_identifier(test_id)
        if len(part) > 1 and not part.isdigit() and part not in KIND_WORDS
    )
