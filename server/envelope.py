"""The one result shape of every tool, and the one place an engine error becomes a tool error.

`{"ok": true, "result": …}` or `{"ok": false, "error": {"code": "MM_…", "message": …}}`, sent as
structured content and as its JSON text (for clients that only read text). An error the agent
can fix (bad input, no such session, index not ready) is a tool result with `is_error=True`, so
the model sees the message; only an unknown tool is a protocol error.
"""

from typing import Any

import orjson
from mcp import types

from engine import KnowhowError, Result


def _result(body: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    text = orjson.dumps(body).decode()
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=body, is_error=is_error
    )


def success(result: Result) -> types.CallToolResult:
    return _result({"ok": True, "result": result.to_json_dict()}, is_error=False)


def failure(error: KnowhowError) -> types.CallToolResult:
    return _result({"ok": False, "error": error.to_dict()}, is_error=True)
