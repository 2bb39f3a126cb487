"""IMPROVEMENT-01 §5 as written in the spec (JSON text copied verbatim), and our additions.

The served schemas must equal these with §5's `definitions` inlined at each `$ref` (the Inspector
and other clients do not follow `$ref`), plus additive properties only (search and summarize
`offset`; filters `ok`, `tool`, `after`, `before`).
"""

import json
from typing import Any

from server.schemas import inline_refs

SPEC_DEFINITIONS = json.loads(
    """
{
  "KnowledgeScope": {
    "oneOf": [
      { "type": "string", "enum": ["current", "all"] },
      {
        "type": "object",
        "additionalProperties": false,
        "properties": {
          "sessionId": { "type": "string", "minLength": 4 }
        },
        "required": ["sessionId"]
      }
    ]
  },
  "KnowledgeFilters": {
    "type": "object",
    "additionalProperties": false,
    "properties": {
      "flowTag": { "type": "string", "minLength": 1 },
      "tag": { "type": "string", "minLength": 1 },
      "screen": { "type": "string", "minLength": 1 },
      "sinceHours": { "type": "integer", "minimum": 1, "maximum": 720 },
      "gitBranch": { "type": "string", "minLength": 1 }
    }
  }
}
"""
)

SPEC_TOOLS: dict[str, Any] = {
    "mm_knowledge_search": json.loads(
        """
{
  "additionalProperties": false,
  "properties": {
    "query": { "type": "string", "minLength": 1, "maxLength": 200 },
    "limit": { "type": "integer", "minimum": 1, "maximum": 100, "default": 20 },
    "scope": { "$ref": "#/definitions/KnowledgeScope", "default": "all" },
    "filters": { "$ref": "#/definitions/KnowledgeFilters" }
  },
  "required": ["query"],
  "type": "object"
}
"""
    ),
    "mm_knowledge_last": json.loads(
        """
{
  "additionalProperties": false,
  "properties": {
    "n": { "type": "integer", "minimum": 1, "maximum": 200, "default": 20 },
    "scope": { "$ref": "#/definitions/KnowledgeScope", "default": "current" },
    "filters": { "$ref": "#/definitions/KnowledgeFilters" }
  },
  "type": "object"
}
"""
    ),
    "mm_knowledge_summarize": json.loads(
        """
{
  "additionalProperties": false,
  "properties": {
    "sessionId": {
      "type": "string",
      "minLength": 4,
      "description": "Deprecated: use scope"
    },
    "scope": { "$ref": "#/definitions/KnowledgeScope", "default": "current" }
  },
  "type": "object"
}
"""
    ),
    "mm_knowledge_sessions": json.loads(
        """
{
  "additionalProperties": false,
  "properties": {
    "limit": { "type": "integer", "minimum": 1, "maximum": 50, "default": 10 },
    "filters": { "$ref": "#/definitions/KnowledgeFilters" }
  },
  "type": "object"
}
"""
    ),
}

ADDITIVE_FILTERS = {"ok", "tool", "after", "before", "context", "stateMode", "fixturePreset"}
ADDITIVE_PROPERTIES = {
    "mm_knowledge_search": {
        "offset",
        "includeSuperseded",
        "minSalience",
        "mode",
        "minSimilarity",
        "types",
    },
    "mm_knowledge_last": {"includeSuperseded"},
    "mm_knowledge_summarize": {"offset"},
}
RECORDING_TOOLS = {"mm_knowledge_start_session", "mm_knowledge_record_step", "mm_knowledge_status"}
LIFECYCLE_TOOLS = {
    "mm_knowledge_timeline",
    "mm_knowledge_session_context",
    "mm_knowledge_supersede",
}
"""Spec 002's tools (not in §5): self-contained schemas of our own."""
CLUSTERING_TOOLS = {"mm_knowledge_find_duplicates", "mm_knowledge_cluster"}
"""Spec 004's duplicates and clusters (not in §5), read-only."""
BROWSER_TOOLS = {
    "mm_" + name
    for name in (
        "launch",
        "navigate",
        "click",
        "type",
        "wait_for",
        "describe_screen",
        "list_testids",
        "accessibility_snapshot",
        "get_state",
        "screenshot",
        "cleanup",
    )
}


def without_descriptions(node: Any) -> Any:
    """A schema without its `description`s (documentation we add; every property has one)."""
    if isinstance(node, list):
        return [without_descriptions(item) for item in node]
    if not isinstance(node, dict):
        return node
    return {
        key: without_descriptions(value)
        for key, value in node.items()
        if not (key == "description" and isinstance(value, str))
    }


def check_knowledge_schema(name: str, served: dict[str, Any]) -> None:
    """`served` is §5's schema for `name`, definitions inlined, plus additive properties only
    (and descriptions)."""
    served = without_descriptions(served)
    assert "$ref" not in json.dumps(served) and "definitions" not in served
    spec = without_descriptions(inline_refs(SPEC_TOOLS[name], SPEC_DEFINITIONS))
    extra_props = set(served["properties"]) - set(spec["properties"])
    assert extra_props == ADDITIVE_PROPERTIES.get(name, set()), extra_props
    properties = dict(served["properties"])
    if "filters" in spec["properties"]:
        filters = properties.pop("filters")
        spec_filters = spec["properties"]["filters"]
        assert set(filters["properties"]) - set(spec_filters["properties"]) == ADDITIVE_FILTERS
        for key, value in spec_filters["properties"].items():
            assert filters["properties"][key] == value
        assert {k: v for k, v in filters.items() if k != "properties"} == {
            k: v for k, v in spec_filters.items() if k != "properties"
        }
    spec_rest = {k: v for k, v in spec["properties"].items() if k != "filters"}
    assert {k: properties[k] for k in spec_rest} == spec_rest
    assert {k: v for k, v in served.items() if k != "properties"} == {
        k: v for k, v in spec.items() if k != "properties"
    }
