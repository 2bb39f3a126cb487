"""Size limits: what one recorded record may hold, and how much of a stored value is used.

Two kinds, for two sources of records:
- what knowhow records through its tools (`mm_knowledge_record_step`, `…_start_session`) is
  checked before anything is written: over a limit is `MM_INVALID_INPUT` naming the field;
- files written by other programs are not refused for their size (below the read cap), but a
  big file is cut when it is read (`parse_bounded`: each string to 1,000 characters, each list
  to 500 items), before anything is indexed, stored in the index for display and evidence, or
  shown, so one huge record cannot slow every search that matches it or flood an answer.

Real records are small (the bundled sample: strings ≤ 152 characters, lists ≤ 22 items, files
≤ 4 KB); the limits leave room for pages with long texts and many elements.
"""

import itertools
from typing import TypeVar

import orjson
from pydantic import BaseModel

from engine.core import InvalidInput

# -- recording (MM_INVALID_INPUT over them) -------------------------------------------------
MAX_RECORD_BYTES = 1_000_000
"""One recorded step or session, as compact JSON."""
MAX_TEXT_CHARS = 10_000
"""Any one string of a recorded record (an error message, typed text, an element's name)."""
MAX_LIST_ITEMS = 2_000
"""Any one list of a recorded record (accessibility nodes, testIds)."""
MAX_DEPTH = 32
"""Nesting of objects and lists in a recorded record."""
MIN_INT, MAX_INT = -(2**63), 2**63 - 1
"""Integers of a recorded record: signed 64-bit, what JSON tools and the index can carry."""

# -- reading what others wrote ------------------------------------------------------------
MAX_READ_FILE_BYTES = 64 * 1024 * 1024
"""The read cap: a `session.json`, step or `superseded.json` file larger than this is skipped
and reported, never read (a device like `/dev/zero` would otherwise fill memory). It is far
above what knowhow writes (`MAX_RECORD_BYTES` as compact JSON, about 3x that indented) and
leaves room for step files of tens of MB written by other programs, which are read and cut."""
READ_TEXT_CHARS = 1_000
"""Of each string of a record read from a file: what is indexed, kept in the index for display
and evidence, and shown by search, summarize and timelines."""
READ_LIST_ITEMS = 500
"""Of each list (and object) of a record read from a file: how many items are used."""
FIELD_TOKENS = 1_000
"""Distinct words of one field of one step that are indexed (a real step has tens): the
index's vocabulary, and the typo vocabulary built from it, grow with what one file holds."""
SMALL_FILE_BYTES = 8_192
"""Files up to this size are read as they are (the bundled sample's are 1-4 KB): no value of
theirs can be big enough to matter, and cutting a file costs more than parsing it, which
would slow every rebuild (`scripts/bench_build.py`)."""
ELLIPSIS = "…"
M = TypeVar("M", bound=BaseModel)


def bounded_text(value: str, limit: int = READ_TEXT_CHARS) -> str:
    """`value`, cut to `limit` characters with `…` when longer."""
    return value if len(value) <= limit else value[: limit - 1] + ELLIPSIS


def parse_bounded(model: type[M], data: bytes) -> M:
    """`data` (a file's JSON) as `model`, cut to the read limits when the file is not small.
    Raises what parsing and validation raise (ValueError, ValidationError)."""
    if len(data) <= SMALL_FILE_BYTES:
        return model.model_validate_json(data)
    return model.model_validate(bounded_json(orjson.loads(data)))


def bounded_json(value: object, depth: int = 0) -> object:
    """Parsed JSON with every string, list and object cut to the read limits, and nothing
    nested deeper than `MAX_DEPTH` (None there): a record written by another program costs
    what a recorded one can cost, however big its file."""
    if isinstance(value, str):
        return bounded_text(value)
    if isinstance(value, list):
        if depth >= MAX_DEPTH:
            return None
        return [bounded_json(v, depth + 1) for v in value[:READ_LIST_ITEMS]]
    if isinstance(value, dict):
        if depth >= MAX_DEPTH:
            return None
        items = itertools.islice(value.items(), READ_LIST_ITEMS)
        return {bounded_text(k): bounded_json(v, depth + 1) for k, v in items}
    return value


def check_record(data: object, field: str = "") -> None:
    """Raise `InvalidInput` naming the first field of `data` (parsed JSON) over a limit.

    Checked on the arguments as received, before they are validated and written: an integer
    beyond 64 bits or a lone surrogate cannot be written as JSON, a 10 MB message would be
    analysed on every search.
    """
    size = _check(data, field, 0)
    if size > MAX_RECORD_BYTES:
        raise InvalidInput(
            field or "record", f"is about {size:,} bytes as JSON; at most {MAX_RECORD_BYTES:,}"
        )


def _is_unicode(text: str) -> bool:
    """False for text with lone surrogates, which JSON parsers of other transports let through
    and no JSON file can hold."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _check(value: object, field: str, depth: int) -> int:
    """The approximate JSON size of `value` after checking it and everything in it."""
    if isinstance(value, bool) or value is None:
        return 5
    if isinstance(value, int):
        if not MIN_INT <= value <= MAX_INT:
            raise InvalidInput(field or "record", "integers must fit in 64 bits (signed)")
        return len(str(value))
    if isinstance(value, str):
        if len(value) > MAX_TEXT_CHARS:
            raise InvalidInput(
                field or "record",
                f"is {len(value):,} characters; at most {MAX_TEXT_CHARS:,}",
            )
        if not value.isascii() and not _is_unicode(value):
            raise InvalidInput(field or "record", "is not valid Unicode (a lone surrogate)")
        return len(value) + 2
    if not isinstance(value, dict | list):
        return 8  # a float
    if depth >= MAX_DEPTH:
        raise InvalidInput(field or "record", f"nests deeper than {MAX_DEPTH} levels")
    if isinstance(value, list):
        if len(value) > MAX_LIST_ITEMS:
            raise InvalidInput(
                field or "record", f"has {len(value):,} items; at most {MAX_LIST_ITEMS:,}"
            )
        return 2 + sum(_check(v, f"{field}[{i}]", depth + 1) + 1 for i, v in enumerate(value))
    size = 2
    for key, item in value.items():
        name = f"{field}.{key}" if field else str(key)
        size += _check(str(key), name, depth + 1) + 1
        size += _check(item, name, depth + 1) + 1
        if size > MAX_RECORD_BYTES:  # stop early: the rest cannot make it smaller
            break
    return size
