"""Every tool call is answered in the envelope, whatever happens inside the server.

A relative `--root` or `--index` (the quick start's defaults, a client config with relative
paths) is made absolute once at start-up: `mm_knowledge_status` once crashed on a relative index
(a SQLite file URI needs an absolute path), and the client got a bare protocol error. A bug in
any tool is still an error envelope with its kind and message, the traceback in the server log.
"""

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from server.app import run_tool
from server.tools.knowledge import TOOLS
from tests.server.first_hour import (
    KNOWHOW,
    SAMPLE_RELATIVE_INDEX,
    SAMPLE_RELATIVE_ROOT,
    envelope,
    made_run,
    spawned,
)

pytestmark = pytest.mark.anyio


@pytest.mark.slow
async def test_status_answers_when_root_and_index_are_relative(tmp_path: Path) -> None:
    (clone := tmp_path / "clone").mkdir()
    made_run(clone)
    relative = ["serve", "--root", str(SAMPLE_RELATIVE_ROOT), "--index", str(SAMPLE_RELATIVE_INDEX)]
    async with spawned(str(KNOWHOW), relative, clone, tmp_path / "server.log") as client:
        status = await envelope(client, "mm_knowledge_status", {})
        assert status["ok"] is True, status
        assert status["result"]["sessionsOnDisk"] == 5
        assert status["result"]["root"] == str(clone / SAMPLE_RELATIVE_ROOT)
        found = await envelope(client, "mm_knowledge_search", {"query": "send"})
        assert found["result"]["total"] > 0


async def test_a_bug_in_a_tool_is_an_error_envelope() -> None:
    async def broken(state: Any, args: dict[str, Any]) -> Any:
        raise ValueError("relative path can't be expressed as a file URI")

    status = next(tool for tool in TOOLS if tool.name == "knowledge_status")
    answer = await run_tool(replace(status, handler=broken), None, {})  # type: ignore[arg-type]
    assert answer.is_error is True
    assert answer.structured_content == {
        "ok": False,
        "error": {
            "code": "MM_KNOWLEDGE_ERROR",
            "message": "unexpected ValueError: relative path can't be expressed as a file URI "
            "(see the server log)",
        },
    }
