"""`notifications/resources/list_changed` when the index holds new sessions.

Sessions are recorded by any process (this server's tools, another server, a harness writing
files): the live index is the one place that sees them all. `SessionWatch.run` polls how many
sessions the index holds and, when that changes, tells every client: those of the handshake
protocol (2025 revisions) on their connection, remembered by `remember` as their requests
arrive (the last request's session of each client reaches its connection's standalone
stream); those of the 2026 revision through `subscriptions/listen` (the SDK's `ListenHandler`
fed by `bus`).
"""

import logging
from collections import OrderedDict

import anyio
from mcp.server.session import ServerSession
from mcp.server.subscriptions import InMemorySubscriptionBus, ResourcesListChanged

from engine import KnowhowError
from server.state import ServerState

log = logging.getLogger(__name__)
POLL_SECONDS = 1.0


class SessionWatch:
    def __init__(self, limit: int) -> None:
        self.bus = InMemorySubscriptionBus()
        self.clients: OrderedDict[str, ServerSession] = OrderedDict()
        """Each handshake-protocol client's latest request session, by client (MCP session id
        over HTTP, "" over stdio); the `limit` most recently active ones (as many as the HTTP
        transport keeps sessions): a client gone quiet longest is forgotten first."""
        self.limit = limit

    def remember(self, client: str, session: ServerSession) -> None:
        self.clients[client] = session
        self.clients.move_to_end(client)
        while len(self.clients) > self.limit:
            self.clients.popitem(last=False)

    async def run(self, state: ServerState) -> None:
        """Until cancelled: a notification to every client each time the number of sessions
        the index holds changes."""
        known = await self._count(state) or 0  # no index yet: no sessions
        while True:
            await anyio.sleep(POLL_SECONDS)
            now = await self._count(state)
            if now is not None and now != known:
                known = now
                await self.notify()

    async def notify(self) -> None:
        for client, session in list(self.clients.items()):
            try:
                await session.send_resource_list_changed()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.clients.pop(client, None)
        await self.bus.publish(ResourcesListChanged())

    @staticmethod
    async def _count(state: ServerState) -> int | None:
        try:
            return (await state.query(state.engine.document_counts)).get("sessions")
        except KnowhowError:  # no index yet, or a damaged one: status says so; try again
            log.debug("session count unavailable", exc_info=True)
            return None
