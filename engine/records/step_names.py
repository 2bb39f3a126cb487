"""Step file names of both forms, a session's step order, and the name of the next step.

- numbered, `0001-mm_click.json` (knowhow's recorder and the one our specs describe): in order
  of their number (`10000-…` after `9999-…`);
- stamped, `20260115-120000-123-click.json` (today's MetaMask recorder: local time to the
  millisecond, never repeating within a process): in order of their stamp;
- neither (`click.json`): read and indexed all the same, reported, and placed by the time its
  record gives.

A session of one form is in that form's order. A session that mixes them (knowhow recording
into a session another recorder started, a file of neither form) is in the order of the
records' own times, each form keeping its own order: a merge, so two steps with the same time,
or a record whose time cannot be read, never reorder a recorder's own sequence.

Two names at the same place (two `0040-…` files, from recorders that raced before numbering
was atomic, or written by another program) are in the order of their records' times, then of
their names: the tool a name ends with never decides which step came first.
"""

import heapq
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from operator import itemgetter
from typing import Literal, TypeVar

T = TypeVar("T")
Form = Literal["numbered", "stamped"]
STAMPED = re.compile(r"(\d{8}-\d{6}-\d{3})-[A-Za-z_].*")
NUMBERED = re.compile(r"(\d+)-[A-Za-z_].*")
STAMP_FORMAT = "%Y%m%d-%H%M%S-"
NEITHER = (
    "file name is neither <number>-<tool>.json nor <YYYYMMDD-HHMMSS-mmm>-<tool>.json: "
    "indexed, placed by its record's timestamp"
)


def name_form(name: str) -> Form | None:
    """The form of a step file name (with or without `.json`); None for neither."""
    return _read(name)[0]


def _place(name: str) -> tuple[int, str]:
    """Where a name puts its step within its form: a numbered name by its number, a stamped
    one by its stamp, one of neither form by its name; never by the tool after them."""
    return _read(name)[1]


def _read(name: str) -> tuple[Form | None, tuple[int, str]]:
    """A name's form and place. String operations first, a pattern only for what may be
    stamped: a long session's names are all read to order one page of it."""
    stem = name.removesuffix(".json")
    head, dash, rest = stem.partition("-")
    if dash and head.isdecimal() and rest[:1].isascii() and "\n" not in rest:
        if rest[:1].isalpha() or rest[:1] == "_":
            return "numbered", (int(head), "")
        if len(head) == 8 and (match := STAMPED.fullmatch(stem)):
            return "stamped", (0, match.group(1))
    return None, (0, stem)


def in_order(items: Sequence[T], name: Callable[[T], str], time: Callable[[T], int]) -> list[T]:
    """`items` (steps of one session) in step order, as the module says; `time` gives a
    step's record time in epoch milliseconds (0 when unknown)."""
    groups: dict[Form | None, list[tuple[tuple[int, str], str, T]]] = {}
    for item in items:
        item_name = name(item)
        form, place = _read(item_name)
        groups.setdefault(form, []).append((place, item_name, item))
    ordered = [_placed(group, time) for group in groups.values()]
    if len(ordered) == 1 and None not in groups:
        return ordered[0]
    return list(heapq.merge(*ordered, key=time))


def _placed(group: list[tuple[tuple[int, str], str, T]], time: Callable[[T], int]) -> list[T]:
    """One form's steps by place; steps at one place by their records' times, then names
    (the times are read only then: reading a record's time costs more than the sort)."""
    group.sort(key=itemgetter(0, 1))
    places = [row[0] for row in group]
    if len(set(places)) == len(places):
        return [row[2] for row in group]
    return [row[2] for row in sorted(group, key=lambda row: (row[0], time(row[2]), row[1]))]


def name_order(names: Sequence[str]) -> list[str] | None:
    """The step files `names` of a session in step order when their names alone tell it (all
    of one form; names at one place by name); None when the records' times are needed (the
    forms mixed, or a name of neither form)."""
    placed = _placed_names(names)
    return None if placed is None else [name for _, name in sorted(placed)]


def newest(names: Sequence[str], count: int) -> list[str] | None:
    """The last `count` of `names` in step order, in that order, when their names alone tell it
    (as `name_order`), without ordering them all: a long session's newest steps are what a
    writer reads to take it over (`engine.index.session_sync.seeded`)."""
    placed = _placed_names(names)
    return None if placed is None else [name for _, name in heapq.nlargest(count, placed)][::-1]


def _placed_names(names: Sequence[str]) -> list[tuple[tuple[int, str], str]] | None:
    """(place, name) of each name, when they are all of one form (None otherwise)."""
    read = [_read(name) for name in names]
    forms = {form for form, _ in read}
    if len(forms) > 1 or None in forms:
        return None
    return [(place, name) for (_, place), name in zip(read, names, strict=True)]


@dataclass(frozen=True, slots=True)
class Frontier:
    """What tells whether new step files come after every known one of a session, knowing
    only the names (all of one form, each new one placed after the last known one; one at the
    same place may have been taken before it: its time decides). Kept while the session grows:
    reading every name of a long session again for each new step costs what the session does.
    """

    form: Form | None
    """None while there are no names."""
    last: tuple[int, str] | None

    def admits(self, new: Sequence[str]) -> bool:
        """Whether the `new` names are of this form and each placed after the last one."""
        read = [_read(name) for name in new]
        forms = {form for form, _ in read} | ({self.form} if self.form else set())
        if len(forms) != 1 or None in forms:
            return False
        return self.last is None or all(place > self.last for _, place in read)

    def extended(self, new: Sequence[str]) -> "Frontier":
        """The frontier once the `new` names (that it `admits`) are known too."""
        read = [_read(name) for name in new]
        form = self.form or next((form for form, _ in read), None)
        places = [place for _, place in read] + ([self.last] if self.last else [])
        return Frontier(form, max(places, default=None))


def frontier(names: Sequence[str]) -> Frontier | None:
    """The frontier of `names` (`Frontier`); None when they are not all of one form."""
    read = [_read(name) for name in names]
    forms = {form for form, _ in read}
    if len(forms) > 1 or None in forms:
        return None
    return Frontier(next(iter(forms), None), max((place for _, place in read), default=None))


def uses_stamps(names: Sequence[str]) -> bool | None:
    """Whether a session's step files (names in step order) are stamped: as its latest
    named one is; None when it has none of either form."""
    for name in reversed(names):
        form = name_form(name)
        if form is not None:
            return form == "stamped"
    return None


def stamped_name(moment: datetime, tool: str, after: str | None) -> str:
    """`<YYYYMMDD-HHMMSS-mmm>-<tool>.json` of `moment` in local time, as today's recorder
    names steps, one millisecond after the stamp of `after` (the session's latest stamped
    name) when `moment` is not later: names stay in the order they were written."""
    local = moment.astimezone()
    if after is not None and (match := STAMPED.fullmatch(after.removesuffix(".json"))):
        previous = datetime.strptime(match.group(1) + "000", STAMP_FORMAT + "%f").astimezone()
        local = max(local, previous + timedelta(milliseconds=1))
    return f"{local.strftime(STAMP_FORMAT)}{local.microsecond // 1000:03d}-{tool}.json"
