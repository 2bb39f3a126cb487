"""What a confused agent sends gets an answer it can act on: the fix spelled as JSON it can
copy, no internal names. A real `knowhow serve` over stdio and the SDK client."""

import json
import re
from pathlib import Path

import pytest

from tests.server.mcp_helpers import call, ok, stdio_agent

pytestmark = [pytest.mark.anyio, pytest.mark.slow]
OBJECT = re.compile(r"\{[^{}]*\}")


def copyable(message: str) -> list[dict[str, str]]:
    """The objects a message spells, each as JSON (an ellipsis stands for the value)."""
    spelled = OBJECT.findall(message)
    assert spelled, message
    return [json.loads(text.replace("…", '"…"').replace('""…""', '"…"')) for text in spelled]


async def test_messages_spell_the_fix_as_json(root: Path, index: Path, log: Path) -> None:
    async with stdio_agent(root, index, log) as client:
        session = (await ok(client, "mm_knowledge_start_session", {"goal": "g"}))["sessionId"]
        for tool, args in [
            ("mm_knowledge_search", {"query": "send", "scope": session}),
            ("mm_knowledge_last", {"scope": session}),
            ("mm_knowledge_summarize", {"scope": session}),
        ]:
            refused = await call(client, tool, args)
            assert refused["error"]["code"] == "MM_INVALID_INPUT", refused
            message = refused["error"]["message"]
            assert message.startswith("scope: "), message
            assert {"sessionId": session} in copyable(message), message

        refused = await call(client, "mm_knowledge_summarize", {"scope": "all"})
        assert {"sessionId": "…"} in copyable(refused["error"]["message"]), refused

    async with stdio_agent(root, index, log) as fresh:  # no current session
        refused = await call(fresh, "mm_knowledge_last", {})
        assert refused["error"]["code"] == "MM_NO_ACTIVE_SESSION", refused
        assert {"sessionId": "…"} in copyable(refused["error"]["message"]), refused

        for value in ("not json", 7, ["ok"]):
            refused = await call(fresh, "mm_knowledge_search", {"query": "x", "filters": value})
            message = refused["error"]["message"]
            assert message.startswith("filters: ") and "object" in message, message
            assert "KnowledgeFilters" not in message and "instance" not in message, message
