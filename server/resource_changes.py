"""`notifications/resources/list_changed` when the index holds new sessions.

Sessions are recorded by any process (this server's tools, another server, a harness writing
files): the live index is the one place that sees them all. `SessionWatch.run` polls how many
sessions the index holds and, when that changes, tells every client: those of the handshake
protocol (2025 revisions) on their connection, remembered by `remember` as their requests
arrive; those of the 2026 revision through `subscriptions/listen` (the SDK's `ListenHandler`
fed by `bus`).
"""

import logging
from typing import Any
from weakref import WeakSet

import anyio
from mcp.server import ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS

from engine import KnowhowError
from server.state import ServerState

log = logging.getLogger(__name__)
POLL_SECONDS = 1.0


class SessionWatch:
    def __init__(self) -> None:
        self.bus = InMemorySubscriptionBus()
        self.sessions: WeakSet[ServerSession] = WeakSet()
        """Connections of the handshake protocol (a closed one drops out by itself)."""

    async def remember(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: note each handshake-protocol connection a request arrives on."""
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            self.sessions.add(ctx.session)
        return await call_next(ctx)

    async def run(self, state: ServerState) -> None:
        """Until cancelled: a notification to every client each time the number of sessions
        the index holds changes."""
        known = await self._count(state)
        while True:
            await anyio.sleep(POLL_SECONDS)
            now = await self._count(state)
            if now is not None and now != known:
                known = now
                await self.notify()

    async def notify(self) -> None:
        for session in list(self.sessions):
            try:
                await session.send_resource_list_changed()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.sessions.discard(session)
        await self.bus.publish(ResourcesListChanged())

    @staticmethod
    async def _count(state: ServerState) -> int | None:
        try:
            return (await state.query(state.engine.document_counts)).get("sessions")
        except KnowhowError:  # no index yet, or a damaged one: status says so; try again
            log.debug("session count unavailable", exc_info=True)
            return None
