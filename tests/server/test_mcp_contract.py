"""The tool contract read back from `tools/list`: names, IMPROVEMENT-01 §5 schemas, hints.

Also pins that the JSON schema an agent sees and the pydantic model that validates a call
accept and reject the same arguments.
"""

from pathlib import Path
from typing import Any

import jsonschema  # type: ignore[import-untyped]
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from engine.core import (
    ClusterInput,
    DuplicatesInput,
    InvalidInput,
    LastInput,
    SearchInput,
    SessionsInput,
    StepInput,
    SummarizeInput,
    SupersedeInput,
    TimelineInput,
    validate,
)
from server.app import create_server
from server.inputs import RecordStepInput, StartSessionInput
from server.settings import ServerSettings
from server.tools.knowledge import TOOLS
from tests.server.spec_schemas import (
    BROWSER_TOOLS,
    CLUSTERING_TOOLS,
    LIFECYCLE_TOOLS,
    RECORDING_TOOLS,
    SPEC_TOOLS,
    check_knowledge_schema,
)

READ_ONLY = {*SPEC_TOOLS, "mm_knowledge_status", "mm_knowledge_timeline"}
READ_ONLY |= {"mm_knowledge_session_context", *CLUSTERING_TOOLS}
SERVED = set(SPEC_TOOLS) | RECORDING_TOOLS | LIFECYCLE_TOOLS | CLUSTERING_TOOLS | BROWSER_TOOLS


def settings(root: Path, index: Path, **extra: Any) -> ServerSettings:
    return ServerSettings(root=root, index=index, **extra)


@pytest.mark.anyio
async def test_tools_list_matches_the_spec(root: Path, index: Path) -> None:
    async with Client(create_server(settings(root, index))) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert set(tools) == SERVED
    for name in SPEC_TOOLS:
        check_knowledge_schema(name, tools[name].input_schema)
    for name, tool in tools.items():
        assert (
            tool.output_schema is not None
        )  # each tool's own: tests/server/test_output_schemas.py
        assert tool.output_schema["required"] == ["ok"]
        assert tool.annotations is not None
        assert tool.annotations.read_only_hint is (name in READ_ONLY)
        assert tool.annotations.destructive_hint is False
        description = tool.description or ""
        assert 1 <= description.count(". ") + 1 <= 3, description
        assert "Use it" in description or "Call it" in description or "stored as" in description


@pytest.mark.anyio
async def test_tool_prefix_is_configurable(root: Path, index: Path) -> None:
    async with Client(create_server(settings(root, index, tool_prefix="kh_"))) as client:
        names = {t.name for t in (await client.list_tools()).tools}
        assert names == {n.replace("mm_", "kh_", 1) for n in SERVED}
        with pytest.raises(MCPError, match="unknown tool"):
            await client.call_tool("mm_knowledge_search", {"query": "send"})


SEARCH_CASES: list[dict[str, Any]] = [
    {"query": "send"},
    {},
    {"query": ""},
    {"query": "x" * 200},
    {"query": "x" * 201},
    {"query": 5},
    {"query": "send", "limit": 0},
    {"query": "send", "limit": 1},
    {"query": "send", "limit": 100},
    {"query": "send", "limit": 101},
    {"query": "send", "limit": True},
    {"query": "send", "limit": "5"},
    {"query": "send", "offset": 0},
    {"query": "send", "offset": -1},
    {"query": "send", "scope": "all"},
    {"query": "send", "scope": "current"},
    {"query": "send", "scope": "everything"},
    {"query": "send", "scope": {"sessionId": "mm-abcd"}},
    {"query": "send", "scope": {"sessionId": "abc"}},
    {"query": "send", "scope": {"sessionId": "mm-abcd", "x": 1}},
    {"query": "send", "scope": {}},
    {"query": "send", "filters": {}},
    {"query": "send", "filters": {"flowTag": "send", "tag": "smoke", "screen": "home"}},
    {"query": "send", "filters": {"flowTag": ""}},
    {"query": "send", "filters": {"sinceHours": 0}},
    {"query": "send", "filters": {"sinceHours": 720}},
    {"query": "send", "filters": {"sinceHours": 721}},
    {"query": "send", "filters": {"gitBranch": "main"}},
    {"query": "send", "filters": {"color": "red"}},
    {"query": "send", "filters": {"ok": False, "tool": "mm_click"}},
    {"query": "send", "filters": {"tool": ""}},
    {"query": "send", "filters": {"context": "prod", "stateMode": "custom"}},
    {"query": "send", "filters": {"context": "staging"}},
    {"query": "send", "filters": {"stateMode": "fresh"}},
    {"query": "send", "filters": {"fixturePreset": "withTokens"}},
    {"query": "send", "filters": {"fixturePreset": ""}},
    {"query": "send", "filters": "send"},
    {"query": "send", "unknown": 1},
    {"query": "send", "minSalience": 0.5},
    {"query": "send", "minSalience": 1},
    {"query": "send", "minSalience": 1.5},
    {"query": "send", "minSalience": -0.1},
    {"query": "send", "minSalience": "0.5"},
    {"query": "send", "mode": "hybrid"},
    {"query": "send", "mode": "keyword"},
    {"query": "send", "mode": "semantic"},
    {"query": "send", "mode": "fuzzy"},
    {"query": "send", "mode": 1},
    {"query": "send", "minSimilarity": 0},
    {"query": "send", "minSimilarity": 0.5},
    {"query": "send", "minSimilarity": 1},
    {"query": "send", "minSimilarity": 1.5},
    {"query": "send", "minSimilarity": -0.1},
    {"query": "send", "minSimilarity": "0.5"},
    {"query": "send", "types": ["step"]},
    {"query": "send", "types": ["step", "screen"]},
    {"query": "send", "types": []},
    {"query": "send", "types": ["workflow"]},
    {"query": "send", "types": "step"},
    {"query": "send", "types": ["session"]},
    {"query": "send", "types": ["session", "step"]},
]
LAST_CASES: list[dict[str, Any]] = [
    {},
    {"n": 1},
    {"n": 200},
    {"n": 0},
    {"n": 201},
    {"scope": "all", "filters": {"screen": "send"}},
    {"scope": 3},
    {"unknown": True},
]
SUMMARIZE_CASES: list[dict[str, Any]] = [
    {},
    {"sessionId": "mm-abcd"},
    {"sessionId": "abc"},
    {"scope": {"sessionId": "mm-abcd"}},
    {"scope": "nope"},
    {"unknown": 1},
    {"offset": 500},
    {"offset": -1},
    {"offset": "500"},
]
SESSIONS_CASES: list[dict[str, Any]] = [
    {},
    {"limit": 50},
    {"limit": 51},
    {"limit": 0},
    {"filters": {"flowTag": "send", "sinceHours": 48}},
    {"filters": {"sinceHours": 1000}},
    {"unknown": 1},
]
START_CASES: list[dict[str, Any]] = [
    {},
    {"goal": "Send flow", "flowTags": ["send"], "tags": ["smoke"], "build": {"buildType": "x"}},
    {"goal": ""},
    {"flowTags": "send"},
    {"flowTags": [""]},
    {"flowTags": ["t"] * 21},
    {"sessionId": "mm-custom-1"},
    {"sessionId": "abc"},
    {"launch": []},
    {"unknown": 1},
]
RECORD_CASES: list[dict[str, Any]] = [
    {"tool": {"name": "mm_click"}, "outcome": {"ok": True}},
    {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "timing": {"durationMs": 5}},
    {},
    {"tool": {"name": "mm_click"}},
    {"tool": {}, "outcome": {"ok": True}},
    {"tool": {"name": "mm_click"}, "outcome": {}},
    {"tool": {"name": "mm_click"}, "outcome": {"ok": "yes"}},
    {"tool": {"name": "mm_click"}, "outcome": {"ok": 1}},
    {"tool": {"name": "mm_click", "target": {"testId": 5}}, "outcome": {"ok": True}},
    {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "labels": "x"},
    {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "observation": []},
    {"tool": {"name": "mm_click"}, "outcome": {"ok": True}, "schemaVersion": 2},
]

STEP = "mm-abcd/0001-mm_click"
TIMELINE_CASES: list[dict[str, Any]] = [
    {"anchor": STEP},
    {"query": "send", "before": 0, "after": 50, "scope": "all"},
    {"anchor": STEP, "before": 51},
    {"anchor": STEP, "after": -1},
    {"anchor": STEP, "before": "3"},
    {"anchor": STEP, "scope": "current"},
    {"anchor": "short"},
    {"query": ""},
    {"anchor": STEP, "unknown": 1},
]
CONTEXT_CASES: list[dict[str, Any]] = [{"stepId": STEP}, {}, {"stepId": 5}, {"stepId": "x"}]
SUPERSEDE_CASES: list[dict[str, Any]] = [
    {"stepId": STEP, "supersededBy": "mm-efgh/0002-mm_click"},
    {"stepId": STEP, "reason": "the button moved"},
    {"stepId": STEP, "reason": ""},
    {"stepId": STEP, "reason": "x" * 501},
    {"supersededBy": STEP},
    {"stepId": STEP, "supersededBy": "x"},
    {"stepId": STEP, "reason": "x", "unknown": 1},
]

DUPLICATES_CASES: list[dict[str, Any]] = [
    {},
    {"similarityThreshold": 0.9, "types": ["step", "session"], "limit": 100},
    {"similarityThreshold": 0, "filters": {"flowTag": "send", "ok": True}},
    {"similarityThreshold": 1, "includeSuperseded": True},
    {"similarityThreshold": 1.01},
    {"similarityThreshold": -0.5},
    {"similarityThreshold": "0.9"},
    {"types": []},
    {"types": ["action"]},
    {"types": "step"},
    {"types": ["step", "screen", "session", "step"]},
    {"limit": 0},
    {"limit": 101},
    {"filters": {"sinceHours": 0}},
    {"threshold": 0.9},
]
CLUSTER_CASES: list[dict[str, Any]] = [
    {},
    {"type": "screen", "nClusters": 2},
    {"type": "session", "nClusters": 50, "filters": {"tag": "smoke"}, "includeSuperseded": True},
    {"nClusters": 1},
    {"nClusters": 51},
    {"nClusters": 5.5},
    {"nClusters": "5"},
    {"type": "action"},
    {"type": ["step"]},
    {"types": ["step"]},
]


def _accepts(model: Any, args: dict[str, Any]) -> bool:
    try:
        validate(model, args)
    except InvalidInput:
        return False
    return True


@pytest.mark.parametrize(
    ("tool", "model", "cases"),
    [
        ("mm_knowledge_search", SearchInput, SEARCH_CASES),
        ("mm_knowledge_last", LastInput, LAST_CASES),
        ("mm_knowledge_summarize", SummarizeInput, SUMMARIZE_CASES),
        ("mm_knowledge_sessions", SessionsInput, SESSIONS_CASES),
        ("mm_knowledge_start_session", StartSessionInput, START_CASES),
        ("mm_knowledge_record_step", RecordStepInput, RECORD_CASES),
        ("mm_knowledge_timeline", TimelineInput, TIMELINE_CASES),
        ("mm_knowledge_session_context", StepInput, CONTEXT_CASES),
        ("mm_knowledge_supersede", SupersedeInput, SUPERSEDE_CASES),
        ("mm_knowledge_find_duplicates", DuplicatesInput, DUPLICATES_CASES),
        ("mm_knowledge_cluster", ClusterInput, CLUSTER_CASES),
    ],
)
def test_schema_and_model_agree(tool: str, model: Any, cases: list[dict[str, Any]]) -> None:
    schema = next(t.input_schema for t in TOOLS if "mm_" + t.name == tool)
    validator = jsonschema.Draft7Validator(schema)
    for args in cases:
        assert validator.is_valid(args) == _accepts(model, args), args


@pytest.mark.parametrize(
    "args",
    [
        {"query": "x", "scope": {"sessionId": "../../etc"}},
        {"query": "x", "scope": {"sessionId": "...."}},
        {"query": "x", "scope": {"sessionId": "/etc/passwd"}},
    ],
)
def test_model_is_stricter_than_schema_on_session_ids(args: dict[str, Any]) -> None:
    """§5 only asks minLength 4; ids that could leave the knowledge root are refused too."""
    assert not _accepts(SearchInput, args)


@pytest.mark.parametrize(
    ("model", "args"),
    [
        (TimelineInput, {}),  # neither anchor nor query
        (TimelineInput, {"anchor": STEP, "query": "send"}),  # both
        (SupersedeInput, {"stepId": STEP}),  # neither supersededBy nor reason
        (StepInput, {"stepId": "../../etc/passwd"}),
    ],
)
def test_model_is_stricter_than_schema_on_lifecycle_inputs(
    model: Any, args: dict[str, Any]
) -> None:
    """One-of rules stay out of the schema (a top-level oneOf is refused by some clients);
    the model enforces them, naming the field."""
    assert not _accepts(model, args)
