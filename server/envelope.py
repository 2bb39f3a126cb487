"""The one result shape (tools and CLI), and the one place an engine error becomes a tool error.

`{"ok": true, "result": …}` or `{"ok": false, "error": {"code": "MM_…", "message": …}}`, sent as
structured content and as its JSON text (for clients that only read text). An error the agent
can fix (bad input, no such session, index not ready) is a tool result with `is_error=True`, so
the model sees the message; only an unknown tool is a protocol error. `server.app` wraps the
shape in the MCP result; this module stays free of the MCP SDK, which the CLI need not load.
"""

from typing import Any

from engine import KnowhowError, Result


def envelope(outcome: Result | dict[str, Any] | KnowhowError) -> dict[str, Any]:
    """The one result shape, for MCP tools and `knowhow … --json` alike."""
    if isinstance(outcome, KnowhowError):
        return {"ok": False, "error": outcome.to_dict()}
    result = outcome.to_json_dict() if isinstance(outcome, Result) else outcome
    return {"ok": True, "result": result}
