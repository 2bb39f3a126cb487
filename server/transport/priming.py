"""SSE priming for streamable HTTP: every stream opens with an event id and a `retry` field.

The 2025-11-25 revision asks a server to open each SSE stream with a priming event (an id, no
data) and lets it say how long a client waits before reconnecting (`retry`). The SDK sends
both once it has an event store (`StreamableHTTPServerTransport`, clients of 2025-11-25 and
later). This store gives ids and keeps nothing: one store serves every MCP session, and stream
ids are JSON-RPC request ids, which two clients share (both send request 1), so a stored event
could be replayed to the wrong client. knowhow never closes a stream before its answer, so a
client that reconnects with `Last-Event-ID` gets an empty stream and sends its request again.
"""

import secrets

from mcp.server.streamable_http import EventCallback, EventId, EventStore, StreamId
from mcp.types import JSONRPCMessage

RETRY_MS = 2000
"""How long a client waits before reconnecting a dropped stream (the SSE `retry` field)."""


class PrimingIds(EventStore):
    """Unguessable event ids, nothing stored, nothing replayed."""

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        return secrets.token_urlsafe(12)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        return None
