"""The one result shape (tools and CLI), and the one place an engine error becomes a tool error.

`{"ok": true, "result": …}` or `{"ok": false, "error": {"code": "MM_…", "message": …}}`, sent as
structured content and as its JSON text (for clients that only read text). An error the agent
can fix (bad input, no such session, index not ready) is a tool result with `is_error=True`, so
the model sees the message; only an unknown tool is a protocol error.
"""

from typing import Any

import orjson
from mcp import types

from engine import KnowhowError, Result


def envelope(outcome: Result | dict[str, Any] | KnowhowError) -> dict[str, Any]:
    """The one result shape, for MCP tools and `knowhow … --json` alike."""
    if isinstance(outcome, KnowhowError):
        return {"ok": False, "error": outcome.to_dict()}
    result = outcome.to_json_dict() if isinstance(outcome, Result) else outcome
    return {"ok": True, "result": result}


def _result(body: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    text = orjson.dumps(body).decode()
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=body, is_error=is_error
    )


def success(result: Result) -> types.CallToolResult:
    return _result(envelope(result), is_error=False)


def failure(error: KnowhowError) -> types.CallToolResult:
    return _result(envelope(error), is_error=True)
