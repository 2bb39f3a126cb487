"""Object and array arguments sent as JSON text, read as the values they spell.

Some clients and models send an object or array argument as a JSON string: `"scope":
"{\"sessionId\": \"mm-…\"}"`, `"types": "[\"session\"]"`. The MCP Inspector 0.15 CLI (what npx
installs on Node 20) fills each argument from its property's own `type`, so it sends JSON text
for every property without one (the `oneOf` `scope`, the `anyOf` search `types`). A string that
parses to a JSON object or array, given for a property whose schema accepts that kind, is read
as that value; any other string is left as sent, for the tool's validation to refuse naming the
field, as for any wrong value.
"""

from typing import Any

import orjson

from server.schemas import Schema

KINDS: dict[str, type] = {"object": dict, "array": list}
"""The JSON kinds read from text, and what each parses to."""
OPENERS = {"{": "object", "[": "array"}


def container_properties(schema: Schema) -> dict[str, frozenset[str]]:
    """The top-level properties of an input schema that accept an object or an array, with
    the kinds each accepts."""
    found = {name: _kinds(prop) for name, prop in schema.get("properties", {}).items()}
    return {name: kinds for name, kinds in found.items() if kinds}


def _kinds(prop: Schema) -> frozenset[str]:
    own = {prop["type"]} & KINDS.keys() if isinstance(prop.get("type"), str) else set()
    branches = [*prop.get("oneOf", []), *prop.get("anyOf", [])]
    return frozenset(own.union(*(_kinds(branch) for branch in branches)))


def values_from_text(
    arguments: dict[str, Any], containers: dict[str, frozenset[str]]
) -> dict[str, Any]:
    """`arguments` with each object or array sent as text for a property of that kind parsed."""
    read = dict(arguments)
    for name in containers.keys() & arguments.keys():
        value = arguments[name]
        if not isinstance(value, str) or OPENERS.get(value.lstrip()[:1]) not in containers[name]:
            continue
        try:
            parsed = orjson.loads(value)
        except orjson.JSONDecodeError:
            continue
        if any(isinstance(parsed, KINDS[kind]) for kind in containers[name]):
            read[name] = parsed
    return read
