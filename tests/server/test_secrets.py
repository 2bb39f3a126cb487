"""Secrets typed through MCP never reach a file: a real `knowhow serve` process, a real MCP
client, the live index; then every byte under the root and the index."""

from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from tests.server.mcp_helpers import eventually, ok, stdio_agent

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

SECRETS = {
    "ref": "Kestrel-Ref-Secret-1",
    "hint": "Kestrel-Hint-Secret-2",
    "pwd": "Kestrel-Pwd-Secret-3",
    "key": "Kestrel-Key-Secret-4",
    "fill": "Kestrel-Fill-Secret-5",
    "copies": "Kestrel-Copy-Secret-6",
    "batch": "Kestrel-Batch-Secret-7",
}
PHRASE = ["vortex", "kestrel", "plinth", "sorrel", "tundra", "quince"] * 2


def typed(input_: dict[str, Any], target: dict[str, Any] | None = None, **tool: Any) -> Any:
    call = {"name": "mm_type", "input": input_, **tool}
    if target is not None:
        call["target"] = target
    return {"tool": call, "outcome": {"ok": True}}


STEPS = [
    {
        "tool": {"name": "mm_describe_screen"},
        "outcome": {"ok": True},
        "observation": {"a11y": {"nodes": [{"ref": "e5", "role": "textbox", "name": "Password"}]}},
    },
    typed({"text": SECRETS["ref"]}, {"a11yRef": "e5"}),
    {
        "tool": {
            "name": "mm_run_steps",
            "input": {"steps": [{"tool": "type", "args": {"ref": "e5", "text": SECRETS["batch"]}}]},
        },
        "outcome": {"ok": True},
    },
    typed({"text": SECRETS["hint"]}, {"a11yHint": {"role": "textbox", "name": "Password"}}),
    typed({"text": SECRETS["pwd"]}, {"testId": "unlock-pwd"}),
    typed({"text": PHRASE}, {"testId": "import-input"}),
    typed({"password": SECRETS["key"]}, {"testId": "unlock-submit"}),
    typed({"fill": {"text": SECRETS["fill"]}}, {"testId": "unlock-password"}),
    {
        **typed({"text": "[REDACTED]"}, {"testId": "field"}, textRedacted=True),
        "args": {"text": SECRETS["copies"]},
        "outcome": {"ok": False, "error": {"code": "MM_X", "message": SECRETS["copies"]}},
        "observation": {"testIds": [{"testId": "echo", "text": SECRETS["copies"]}]},
    },
]


def holding(folder: Path, needles: list[str]) -> list[str]:
    """`file: needle` for every file under `folder` holding a needle (any case)."""
    found = []
    for path in folder.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            found += [f"{path}: {n}" for n in needles if n.lower().encode() in data]
    return found


async def indexed(client: Client, steps: int) -> bool:
    status = await ok(client, "mm_knowledge_status", {})
    documents = status["documents"] or {}
    return bool(documents.get("steps", 0) >= steps and not status["indexLag"]["pendingSessions"])


async def test_typed_secrets_are_in_no_file_of_root_or_index(
    root: Path, index: Path, log: Path
) -> None:
    async with stdio_agent(root, index, log) as client:
        await ok(client, "mm_knowledge_start_session", {"goal": "unlock the wallet"})
        replies = [await ok(client, "mm_knowledge_record_step", step) for step in STEPS]
        assert [r["textRedacted"] for r in replies] == [False] + [True] * (len(STEPS) - 1)
        await eventually(lambda: indexed(client, len(STEPS)))
        for secret in [*SECRETS.values(), PHRASE[0]]:
            page = await ok(client, "mm_knowledge_search", {"query": secret})
            assert secret.lower() not in str(page["results"]).lower()
    needles = [*SECRETS.values(), *PHRASE]
    assert holding(root, needles) == []
    assert holding(index, needles) == []
