"""Each tool's `outputSchema`: the envelope, with `result` described by the tool's result model.

Generated from the same pydantic models that build the results, so the two cannot drift; MCP
clients validate structured content against it (the SDK and the MCP Inspector do) and read
results by it. Results are sent without their empty optional fields (`Result.to_json_dict`),
so an optional field is declared with its own type, never `null`; pydantic's titles are
dropped, and a value of any JSON type is declared as such (a bare `{}` says nothing, and the
Inspector flags it).
"""

from typing import Any

from pydantic import BaseModel

from server.schemas import Schema, inline_refs

JSON_VALUE: Schema = {
    "anyOf": [
        {"type": "object"},
        {"type": "array"},
        {"type": "string"},
        {"type": "number"},
        {"type": "boolean"},
        {"type": "null"},
    ]
}
ERROR: Schema = {
    "type": "object",
    "required": ["code", "message"],
    "properties": {
        "code": {"type": "string", "description": "MM_INVALID_INPUT, MM_NOT_FOUND, …"},
        "message": {"type": "string", "description": "What went wrong and what to do next"},
    },
}


def output_schema(result: type[BaseModel]) -> Schema:
    """`{"ok": true, "result": <result>}` or `{"ok": false, "error": {code, message}}`.

    Self-contained, nested models inlined (no `$ref`), as the input schemas are: the result
    models do not recurse, and clients need not resolve references to read a result."""
    described = result.model_json_schema(mode="serialization")
    definitions = described.pop("$defs", {})
    return {
        "type": "object",
        "required": ["ok"],
        "properties": {
            "ok": {"type": "boolean"},
            "result": _trim(inline_refs(described, definitions)),
            "error": ERROR,
        },
        "oneOf": [
            {"properties": {"ok": {"const": True}}, "required": ["result"]},
            {"properties": {"ok": {"const": False}}, "required": ["error"]},
        ],
    }


def _trim(node: Any) -> Any:
    """A schema (or a list of schemas) as served: see the module's docstring."""
    if isinstance(node, list):
        return [_trim(item) for item in node]
    if not isinstance(node, dict):
        return node
    if isinstance(node.get("required"), list):  # a None value is not sent at all
        properties = node.get("properties", {})
        required = [name for name in node["required"] if not _nullable(properties.get(name))]
        node = {**node, "required": required} if required else _without(node, "required")
    if _nullable(node):
        kept = [b for b in node["anyOf"] if b != {"type": "null"}]
        rest = _without(node, "anyOf")
        node = {**rest, **kept[0]} if len(kept) == 1 else {**rest, "anyOf": kept}
    trimmed: Schema = {}
    for key, value in node.items():
        if (key == "title" and isinstance(value, str)) or (key == "default" and value is None):
            continue
        if key == "properties":  # a map of names to schemas, not a schema
            trimmed[key] = {name: _trim(prop) for name, prop in value.items()}
        else:
            trimmed[key] = _trim(value)
    return trimmed if set(trimmed) - {"description", "default"} else {**JSON_VALUE, **trimmed}


def _nullable(schema: Any) -> bool:
    return isinstance(schema, dict) and {"type": "null"} in schema.get("anyOf", [])


def _without(node: Schema, key: str) -> Schema:
    return {k: v for k, v in node.items() if k != key}
