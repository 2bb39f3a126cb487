"""An object or array argument sent as a JSON string is read as the value it spells.

Some clients and models send an object or array argument as a string: the MCP Inspector 0.15
CLI (what `npx @modelcontextprotocol/inspector` installs on Node 20) fills each argument from
its property's own `type`, and sends JSON text for a property without one, such as the `oneOf`
`scope`. A string that parses to a valid value of an object- or array-typed property is
accepted; anything else is refused as before, `MM_INVALID_INPUT` naming the field.
"""

import json
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.server.first_hour import KNOWHOW, SEND_SESSION, envelope, made_run, spawned

pytestmark = [pytest.mark.anyio, pytest.mark.slow]


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_run(tmp_path_factory.mktemp("clone"))


async def both(client: Client, tool: str, args: dict[str, Any], key: str) -> list[dict[str, Any]]:
    """The envelopes of the call with `args[key]` as an object and as its JSON text."""
    as_object = await envelope(client, tool, args)
    as_text = await envelope(client, tool, {**args, key: json.dumps(args[key])})
    return [as_object, as_text]


async def test_object_arguments_sent_as_json_text(clone: Path, tmp_path: Path) -> None:
    args = ["serve", "--root", str(clone / "test-artifacts" / "llm-knowledge")]
    args += ["--index", str(clone / "index-data")]
    async with spawned(str(KNOWHOW), args, clone, tmp_path / "log") as client:
        scoped = {"query": "send", "scope": {"sessionId": SEND_SESSION}}
        as_object, as_text = await both(client, "mm_knowledge_search", scoped, "scope")
        assert as_text == as_object and as_text["result"]["total"] > 0
        assert {r["sessionId"] for r in as_text["result"]["results"]} == {SEND_SESSION}

        filtered = {"query": "send", "filters": {"ok": False}}
        as_object, as_text = await both(client, "mm_knowledge_search", filtered, "filters")
        assert as_text == as_object and as_text["result"]["total"] > 0
        assert not any(r["ok"] for r in as_text["result"]["results"])

        sessions = {"filters": {"flowTag": "swap"}, "limit": 5}
        as_object, as_text = await both(client, "mm_knowledge_sessions", sessions, "filters")
        assert as_text == as_object and as_text["result"]["total"] == 1

        summary = {"scope": {"sessionId": SEND_SESSION}}
        as_object, as_text = await both(client, "mm_knowledge_summarize", summary, "scope")
        assert as_text == as_object and as_text["ok"] is True

        # a plain string where a string is allowed is still that string
        plain = await envelope(client, "mm_knowledge_search", {"query": "send", "scope": "all"})
        assert plain["ok"] is True and plain["result"]["total"] > 0


async def test_what_a_client_filling_arguments_from_their_type_sends(
    clone: Path, tmp_path: Path
) -> None:
    """Every property a client cannot read a `type` from is one whose JSON text is read, and
    arrays sent as JSON text are read as the arrays."""
    args = ["serve", "--root", str(clone / "test-artifacts" / "llm-knowledge")]
    args += ["--index", str(clone / "index-data")]
    async with spawned(str(KNOWHOW), args, clone, tmp_path / "log") as client:
        untyped = {
            (tool.name, name): prop
            for tool in (await client.list_tools()).tools
            for name, prop in tool.input_schema.get("properties", {}).items()
            if "type" not in prop
        }
        for (tool_name, name), prop in untyped.items():
            kinds = {branch.get("type") for branch in prop.get("oneOf", prop.get("anyOf", []))}
            assert kinds & {"object", "array"}, (tool_name, name, prop)

        sessions = {"query": "confirm the swap", "types": ["session"], "limit": 2}
        as_list, as_text = await both(client, "mm_knowledge_search", sessions, "types")
        assert as_text == as_list and as_text["result"]["total"] > 0
        assert {r["type"] for r in as_text["result"]["results"]} == {"session"}

        steps = {"types": ["step"], "filters": {"flowTag": "swap"}, "limit": 3}
        as_list, as_text = await both(client, "mm_knowledge_find_duplicates", steps, "types")
        assert as_text == as_list and as_text["result"]["total"] > 0

        tagged = {"goal": "Swap ETH for DAI", "flowTags": json.dumps(["swap"]), "tags": "[]"}
        started = await envelope(client, "mm_knowledge_start_session", tagged)
        assert started["ok"] is True, started
        assert started["result"]["session"]["flowTags"] == ["swap"]


REFUSED = [
    ({"query": "send", "scope": '{"sessionId": 7}'}, "scope"),
    ({"query": "send", "scope": '{"sessionId": "mm-x"'}, "scope"),  # not JSON
    ({"query": "send", "scope": '["all"]'}, "scope"),
    ({"query": "send", "filters": '{"flowTag": "send", "color": "red"}'}, "filters"),
    ({"query": "send", "filters": "ok"}, "filters"),
    ({"query": "send", "filters": '"{\\"ok\\": true}"'}, "filters"),  # a string in a string
    ({"query": "send", "filters": '["ok"]'}, "filters"),  # an array where an object belongs
    ({"query": "send", "types": '{"step": true}'}, "types"),  # an object where an array belongs
    ({"query": "send", "types": '["step", "session"]'}, "types"),
    ({"query": "send", "types": "[step]"}, "types"),  # not JSON
]


async def test_anything_else_is_refused_naming_the_field(clone: Path, tmp_path: Path) -> None:
    serve = ["serve", "--root", str(clone / "test-artifacts" / "llm-knowledge")]
    serve += ["--index", str(clone / "index-data")]
    async with spawned(str(KNOWHOW), serve, clone, tmp_path / "log") as client:
        for args, field in REFUSED:
            refused = await envelope(client, "mm_knowledge_search", args)
            assert refused["ok"] is False, args
            assert refused["error"]["code"] == "MM_INVALID_INPUT", refused
            assert refused["error"]["message"].startswith(field), refused
