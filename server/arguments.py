"""Object arguments sent as JSON text, read as the objects they spell.

Some clients and models send an object argument, or every argument of a `oneOf` property such
as `scope`, as a JSON string: `"scope": "{\"sessionId\": \"mm-…\"}"` (the MCP Inspector 0.15
CLI does). A string that parses to a JSON object, given for a property whose schema accepts an
object, is read as that object; any other string is left as sent, for the tool's validation to
refuse naming the field, as for any wrong value.
"""

from typing import Any

import orjson

from server.schemas import Schema


def object_properties(schema: Schema) -> frozenset[str]:
    """The top-level properties of an input schema that accept a JSON object."""
    return frozenset(
        name for name, prop in schema.get("properties", {}).items() if _accepts_object(prop)
    )


def _accepts_object(prop: Schema) -> bool:
    if prop.get("type") == "object":
        return True
    branches = [*prop.get("oneOf", []), *prop.get("anyOf", [])]
    return any(_accepts_object(branch) for branch in branches)


def objects_from_text(arguments: dict[str, Any], objects: frozenset[str]) -> dict[str, Any]:
    """`arguments` with each JSON object sent as text for an object property parsed."""
    read = dict(arguments)
    for name in objects & arguments.keys():
        value = arguments[name]
        if isinstance(value, str) and value.lstrip().startswith("{"):
            try:
                parsed = orjson.loads(value)
            except orjson.JSONDecodeError:
                continue
            if isinstance(parsed, dict):
                read[name] = parsed
    return read
