"""The tools' JSON schemas: IMPROVEMENT-01 §5 exactly in meaning, plus our additive properties.

They are declared here, not generated from the pydantic inputs, because §5 fixes their shape
(`oneOf` scope, no `anyOf`/`title` noise) and agents read them. §5 writes scope and filters as
`$ref`s to shared `definitions`; we serve the same definitions inlined at each use, because
clients fill arguments from a property's own `type` and many (the official MCP Inspector among
them) do not follow `$ref`: they sent `filters` and object `scope` as strings.
The pydantic models in `engine.core.inputs` / `server.inputs` enforce the same limits at call time;
`tests/server/test_contract.py` checks that schema and model accept and reject the same inputs.
Additive properties (not in §5): search `offset`, `minSalience`, `mode`, `minSimilarity`,
`types`; search and last `includeSuperseded`; filters `ok`, `tool`, `after`, `before`,
`context`, `stateMode`, `fixturePreset`. Tools not
in §5 (spec 002's lifecycle): timeline, session context, supersede; (spec 004's clustering):
find duplicates, cluster.
"""

from typing import Any

Schema = dict[str, Any]

KNOWLEDGE_SCOPE: Schema = {
    "description": 'Whose steps: "all" sessions, the "current" session (the one this client '
    'started), or one session: {"sessionId": "mm-…"}',
    "oneOf": [
        {"type": "string", "enum": ["current", "all"]},
        {
            "type": "object",
            "additionalProperties": False,
            "properties": {"sessionId": {"type": "string", "minLength": 4}},
            "required": ["sessionId"],
        },
    ],
}

KNOWLEDGE_FILTERS: Schema = {
    "description": "Keep only steps that match every filter given (AND)",
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "flowTag": {
            "type": "string",
            "minLength": 1,
            "description": "Only sessions with this flowTag: send, swap, sign, connect, …",
        },
        "tag": {"type": "string", "minLength": 1, "description": "Only sessions with this tag"},
        "screen": {
            "type": "string",
            "minLength": 1,
            "description": "Only steps on this screen: home, send, swap, confirm-transaction, …",
        },
        "sinceHours": {
            "type": "integer",
            "minimum": 1,
            "maximum": 720,
            "description": "Only sessions created in the last N hours",
        },
        "gitBranch": {
            "type": "string",
            "minLength": 1,
            "description": "Only sessions recorded on this git branch",
        },
        "ok": {"type": "boolean", "description": "Only steps that worked (true) or failed (false)"},
        "tool": {
            "type": "string",
            "minLength": 1,
            "description": "Only steps of this tool, with or without its prefix (mm_click = "
            "click); a run_steps batch holding that action counts",
        },
        "after": {
            "type": "string",
            "format": "date-time",
            "description": "Only steps at or after this ISO-8601 time",
        },
        "before": {
            "type": "string",
            "format": "date-time",
            "description": "Only steps before this ISO-8601 time",
        },
        "context": {
            "type": "string",
            "enum": ["e2e", "prod"],
            "description": "Only steps recorded against this context (today's MetaMask records)",
        },
        "stateMode": {
            "type": "string",
            "enum": ["default", "onboarding", "custom"],
            "description": "Only sessions whose wallet was launched in this state mode",
        },
        "fixturePreset": {
            "type": "string",
            "minLength": 1,
            "description": "Only sessions whose wallet was launched with this fixture preset",
        },
    },
}


def inline_refs(node: Any, definitions: Schema) -> Any:
    """`node` with every `{"$ref": "#/…/X", …}` replaced by `definitions[X]`, sibling keys (such
    as `default`) kept: the same meaning, self-contained. Our schemas do not recurse."""
    if isinstance(node, list):
        return [inline_refs(item, definitions) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = definitions[node["$ref"].rsplit("/", 1)[-1]]
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        return inline_refs({**target, **siblings}, definitions)
    return {key: inline_refs(value, definitions) for key, value in node.items()}


def _knowledge(properties: Schema, required: list[str] | None = None) -> Schema:
    schema: Schema = {"additionalProperties": False, "properties": properties}
    if required:
        schema["required"] = required
    schema["type"] = "object"
    return schema


SEARCH: Schema = _knowledge(
    {
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "Words, identifiers (testIds, selectors) or a sentence; typos forgiven",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100,
            "default": 20,
            "description": "Results per page",
        },
        "scope": {**KNOWLEDGE_SCOPE, "default": "all"},
        "filters": KNOWLEDGE_FILTERS,
        "offset": {
            "type": "integer",
            "minimum": 0,
            "maximum": 10000,
            "default": 0,
            "description": "Skip this many results; call again with nextOffset while hasMore",
        },
        "includeSuperseded": {
            "type": "boolean",
            "default": False,
            "description": "Also return superseded steps, flagged isSuperseded with supersededBy",
        },
        "minSalience": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": 0,
            "description": "Only steps later sessions followed successfully, at least this "
            "salient (0..1, fades with time since the recalls)",
        },
        "mode": {
            "type": "string",
            "enum": ["hybrid", "keyword", "semantic"],
            "default": "hybrid",
            "description": "hybrid: words and meaning; keyword: the words only; semantic: meaning",
        },
        "minSimilarity": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "description": "Lowest cosine (0..1) a semantic hit needs; never drops keyword hits",
        },
        "types": {
            "anyOf": [
                {
                    "type": "array",
                    "items": {"type": "string", "enum": ["step", "screen"]},
                    "minItems": 1,
                    "maxItems": 2,
                },
                {"type": "array", "items": {"const": "session"}, "minItems": 1, "maxItems": 1},
            ],
            "description": "step (actions) and/or screen (observations), default both; or "
            '["session"] alone: workflows ranked by their best matching step, each with its '
            "goal, matching steps, screens and actions",
        },
    },
    required=["query"],
)

LAST: Schema = _knowledge(
    {
        "n": {
            "type": "integer",
            "minimum": 1,
            "maximum": 200,
            "default": 20,
            "description": "How many of the newest steps",
        },
        "scope": {**KNOWLEDGE_SCOPE, "default": "current"},
        "filters": KNOWLEDGE_FILTERS,
        "includeSuperseded": {
            "type": "boolean",
            "default": False,
            "description": "Also return superseded steps, flagged isSuperseded with supersededBy",
        },
    }
)

SUMMARIZE: Schema = _knowledge(
    {
        "sessionId": {"type": "string", "minLength": 4, "description": "Deprecated: use scope"},
        "scope": {**KNOWLEDGE_SCOPE, "default": "current"},
        "offset": {
            "type": "integer",
            "minimum": 0,
            "maximum": 100_000_000,
            "default": 0,
            "description": "First step of the page: a long session comes a page at a time "
            "(truncated, nextOffset)",
        },
    }
)

SESSIONS: Schema = _knowledge(
    {
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 50,
            "default": 10,
            "description": "How many of the newest sessions",
        },
        "filters": KNOWLEDGE_FILTERS,
    }
)

_STEP_ID: Schema = {
    "type": "string",
    "minLength": 6,
    "maxLength": 330,
    "description": "A step id as results show it: <sessionId>/<NNNN>-<tool>",
}
_DEPTH: Schema = {"type": "integer", "minimum": 0, "maximum": 50, "default": 5}

TIMELINE: Schema = _knowledge(
    {
        "anchor": {**_STEP_ID, "description": "The step to centre on (or give query instead)"},
        "query": {
            "type": "string",
            "minLength": 1,
            "maxLength": 200,
            "description": "Words whose best search hit becomes the anchor (instead of anchor)",
        },
        "before": {**_DEPTH, "description": "Steps before the anchor (0-50)"},
        "after": {**_DEPTH, "description": "Steps after the anchor (0-50)"},
        "scope": {
            "type": "string",
            "enum": ["session", "all"],
            "default": "session",
            "description": "session: the anchor's own session, by position; all: every "
            "session, by time",
        },
    }
)

SESSION_CONTEXT: Schema = _knowledge(
    {"stepId": {**_STEP_ID, "description": "The step, as a search result gives it"}},
    required=["stepId"],
)

SUPERSEDE: Schema = _knowledge(
    {
        "stepId": {**_STEP_ID, "description": "The step that no longer works as recorded"},
        "supersededBy": {**_STEP_ID, "description": "The newer step that works instead"},
        "reason": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500,
            "description": "Why, when there is no newer step (or in addition to it)",
        },
    },
    required=["stepId"],
)

_INCLUDE_SUPERSEDED: Schema = {
    "type": "boolean",
    "default": False,
    "description": "Also count superseded steps (hidden by default)",
}
_MEMORY_TYPE: Schema = {"type": "string", "enum": ["step", "screen", "session"]}

FIND_DUPLICATES: Schema = _knowledge(
    {
        "similarityThreshold": {
            "type": "number",
            "minimum": 0,
            "maximum": 1,
            "default": 0.95,
            "description": "Lowest cosine (0..1) between texts of one group",
        },
        "types": {
            "type": "array",
            "items": _MEMORY_TYPE,
            "minItems": 1,
            "maxItems": 3,
            "description": "step (actions), screen (observations), session; default all",
        },
        "filters": KNOWLEDGE_FILTERS,
        "includeSuperseded": _INCLUDE_SUPERSEDED,
        "limit": {
            "type": "integer",
            "minimum": 1,
            "maximum": 100,
            "default": 20,
            "description": "Groups to return, largest first",
        },
    }
)

CLUSTER: Schema = _knowledge(
    {
        "type": {
            **_MEMORY_TYPE,
            "default": "step",
            "description": "step (actions), screen (observations) or session",
        },
        "nClusters": {
            "type": "integer",
            "minimum": 2,
            "maximum": 50,
            "default": 5,
            "description": "How many clusters",
        },
        "filters": KNOWLEDGE_FILTERS,
        "includeSuperseded": _INCLUDE_SUPERSEDED,
    }
)

_SESSION_ID: Schema = {
    "type": "string",
    "minLength": 4,
    "maxLength": 128,
    "pattern": "^[A-Za-z0-9_-][A-Za-z0-9._-]*$",
}
_TAGS: Schema = {
    "type": "array",
    "maxItems": 20,
    "items": {"type": "string", "minLength": 1, "maxLength": 64},
}

START_SESSION: Schema = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "goal": {
            "type": "string",
            "minLength": 1,
            "maxLength": 500,
            "description": "What this run is for, in a sentence: later agents search it",
        },
        "flowTags": {
            **_TAGS,
            "description": "Flows this run covers: send, swap, connect, sign, onboarding, "
            "settings, tx-confirmation, …",
        },
        "tags": {**_TAGS, "description": "Free-form tags, e.g. smoke"},
        "sessionId": {**_SESSION_ID, "description": "Your own id (default: a new mm-… id)"},
        "build": {"type": "object", "description": 'e.g. {"buildType": "build:test"}'},
        "launch": {
            "type": "object",
            "description": 'e.g. {"stateMode": "default", "extensionPath": "dist/chrome"}',
        },
    },
}

_TARGET: Schema = {
    "type": "object",
    "properties": {
        "testId": {"type": "string"},
        "selector": {"type": "string"},
        "a11yRef": {"type": "string"},
    },
}

RECORD_STEP: Schema = {
    "type": "object",
    "additionalProperties": True,
    "required": ["tool", "outcome"],
    "properties": {
        "sessionId": {**_SESSION_ID, "description": "Default: the current session"},
        "timestamp": {"type": "string", "format": "date-time", "description": "Default: now"},
        "schemaVersion": {"type": "integer", "enum": [1], "description": "Default: 1"},
        "tool": {
            "type": "object",
            "description": "The call you made: name (mm_click, …), input, target",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 128},
                "input": {"type": "object"},
                "target": _TARGET,
                "textRedacted": {"type": "boolean"},
                "textLength": {"type": "integer", "minimum": 0},
            },
        },
        "outcome": {
            "type": "object",
            "description": "Whether it worked, and the error when not: {code, message}",
            "required": ["ok"],
            "properties": {
                "ok": {"type": "boolean"},
                "error": {
                    "type": "object",
                    "properties": {"code": {"type": "string"}, "message": {"type": "string"}},
                },
            },
        },
        "observation": {
            "type": "object",
            "description": "What the screen showed after the step: state {currentScreen, "
            "currentUrl}, testIds [{testId, tag, text, visible}], a11y {nodes [{ref, role, name}]}",
        },
        "labels": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Default: derived from the step (interaction, navigation, …)",
        },
    },
}

STATUS: Schema = {"type": "object", "additionalProperties": False, "properties": {}}
