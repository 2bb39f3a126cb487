"""A JSON answer as an indented outline a person reads (the text form of a resource).

Keys are knowhow's own field names; every recorded value (a goal, a screen name, an error
message) is written as a JSON string literal, quoted and escaped, so recorded text stays data:
a newline or a heading marker in a goal cannot start a line of its own.
"""

from typing import Any

import orjson

INDENT = "  "


def outline(title: str, value: Any) -> str:
    """`title` on the first line, then `value` (a JSON-like tree) one field per line."""
    lines = [title]
    _lines(value, 0, lines)
    return "\n".join(lines) + "\n"


def _lines(value: Any, depth: int, out: list[str]) -> None:
    pad = INDENT * depth
    if isinstance(value, dict):
        for key, item in value.items():
            if item is None or item == [] or item == {}:
                continue
            if _scalar(item):
                out.append(f"{pad}{key}: {_literal(item)}")
            else:
                out.append(f"{pad}{key}:")
                _lines(item, depth + 1, out)
    elif isinstance(value, list):
        for item in value:
            if _scalar(item):
                out.append(f"{pad}- {_literal(item)}")
            else:
                out.append(f"{pad}-")
                _lines(item, depth + 1, out)
    else:
        out.append(f"{pad}{_literal(value)}")


def _scalar(value: Any) -> bool:
    return not isinstance(value, dict | list)


def _literal(value: Any) -> str:
    return orjson.dumps(value).decode()
