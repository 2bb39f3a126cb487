"""Each tool declares the shape of its own result, and what it answers has that shape.

The MCP spec says structured content must conform to the tool's declared `outputSchema`, and
clients (the SDK, the MCP Inspector) validate it and read results by it. So each tool's schema
says what its `result` holds (generated from the pydantic models that build the results, so the
two cannot drift), the error branch says `{code, message}`, and every input property says what
it is for. The SDK client validates every answer itself too; this test does it explicitly, with
`jsonschema`, so a tool whose schema is empty or wrong fails here by name.
"""

from pathlib import Path
from typing import Any

import jsonschema
import pytest
from mcp import Client, types

from server.demo import demo_app
from tests.server.browser_helpers import DEMO_RULES, needs_chromium, unlock
from tests.server.first_hour import (
    KNOWHOW,
    SEND_SESSION,
    SWAP_SESSION,
    envelope,
    made_run,
    spawned,
)

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
SEND_CLICK = f"{SEND_SESSION}/0021-mm_click"

KNOWLEDGE_CALLS: list[tuple[str, dict[str, Any]]] = [
    ("mm_knowledge_status", {}),
    ("mm_knowledge_search", {"query": "send"}),
    ("mm_knowledge_search", {"query": "swap", "types": ["session"]}),
    ("mm_knowledge_search", {"query": "qqqzzz nothing"}),
    ("mm_knowledge_search", {"query": ""}),  # an error envelope
    ("mm_knowledge_last", {"n": 3, "scope": "all"}),
    ("mm_knowledge_last", {"n": 3}),  # no current session yet: an error envelope
    ("mm_knowledge_sessions", {"limit": 5}),
    ("mm_knowledge_summarize", {"scope": {"sessionId": SWAP_SESSION}}),
    ("mm_knowledge_timeline", {"anchor": SEND_CLICK, "before": 2, "after": 2}),
    ("mm_knowledge_timeline", {"query": "swap", "scope": "all"}),
    ("mm_knowledge_session_context", {"stepId": SEND_CLICK}),
    ("mm_knowledge_find_duplicates", {"types": ["screen"], "limit": 3}),
    ("mm_knowledge_cluster", {"type": "step", "nClusters": 3}),
    ("mm_knowledge_start_session", {"goal": "Check the schemas", "flowTags": ["send"]}),
    (
        "mm_knowledge_record_step",
        {
            "tool": {"name": "mm_click", "target": {"testId": "coin-overview-send"}},
            "outcome": {"ok": True},
        },
    ),
    ("mm_knowledge_last", {"n": 3}),
    ("mm_knowledge_supersede", {"stepId": SEND_CLICK, "reason": "button renamed"}),
]


def result_schema(tool: types.Tool) -> dict[str, Any]:
    """The schema of `result` in the success branch of the tool's envelope."""
    schema = tool.output_schema
    assert schema is not None, tool.name
    result = schema["properties"]["result"]
    assert isinstance(result, dict)
    return result


def check(tool: types.Tool, answer: dict[str, Any]) -> None:
    assert tool.output_schema is not None
    jsonschema.validate(answer, tool.output_schema)


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_run(tmp_path_factory.mktemp("clone"))


def serve_args(clone: Path) -> list[str]:
    root, index = clone / "test-artifacts" / "llm-knowledge", clone / "index-data"
    return ["serve", "--root", str(root), "--index", str(index)]


async def tools_of(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


async def test_each_tool_declares_its_own_result_and_describes_its_inputs(
    clone: Path, tmp_path: Path
) -> None:
    async with spawned(str(KNOWHOW), serve_args(clone), clone, tmp_path / "log") as client:
        tools = await tools_of(client)
    undescribed = [
        f"{name}.{prop}"
        for name, tool in tools.items()
        for prop, schema in tool.input_schema.get("properties", {}).items()
        if not schema.get("description")
    ]
    assert not undescribed, undescribed
    for name, tool in tools.items():
        result = result_schema(tool)
        assert result.get("properties") or result.get("$ref") or result.get("anyOf"), name
    search, last = (
        result_schema(tools["mm_knowledge_search"]),
        result_schema(tools["mm_knowledge_last"]),
    )
    assert search != last


async def test_every_knowledge_tool_answers_in_its_declared_shape(
    clone: Path, tmp_path: Path
) -> None:
    async with spawned(str(KNOWHOW), serve_args(clone), clone, tmp_path / "log") as client:
        tools = await tools_of(client)
        called = set()
        for name, args in KNOWLEDGE_CALLS:
            answer = await envelope(client, name, args)
            check(tools[name], answer)
            called.add(name)
        for name, tool in tools.items():  # browser tools, before a launch: an error envelope
            if not name.startswith("mm_knowledge_"):
                check(tool, await envelope(client, name, {}))
    assert called == {name for name in tools if name.startswith("mm_knowledge_")}


@needs_chromium
async def test_every_browser_tool_answers_in_its_declared_shape(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    serve = ["serve", "--root", str(tmp_path / "root"), "--index", str(tmp_path / "index")]
    serve += ["--screen-rules", str(DEMO_RULES)]
    with demo_app() as url:
        async with spawned(str(KNOWHOW), serve, tmp_path, tmp_path / "log") as client:
            tools = await tools_of(client)
            calls: list[tuple[str, dict[str, Any]]] = [
                ("mm_launch", {"url": url, "goal": "Check the schemas", "flowTags": ["send"]}),
                ("mm_describe_screen", {}),
                ("mm_list_testids", {"limit": 5}),
                ("mm_accessibility_snapshot", {}),
                ("mm_get_state", {}),
                ("mm_wait_for", {"testId": "unlock-password"}),
                ("mm_type", {"testId": "unlock-password", "text": "wrong"}),
                ("mm_click", {"testId": "no-such-button", "timeoutMs": 300}),  # an error
                ("mm_navigate", {"url": "#/unlock"}),
                ("mm_screenshot", {"name": "unlock"}),
            ]
            for name, args in calls:
                check(tools[name], await envelope(client, name, args))
            await unlock(client)
            check(tools["mm_describe_screen"], await envelope(client, "mm_describe_screen", {}))
            check(tools["mm_cleanup"], await envelope(client, "mm_cleanup", {}))
    browser = {name for name in tools if not name.startswith("mm_knowledge_")}
    assert browser == {name for name, _ in calls} | {"mm_cleanup"}
