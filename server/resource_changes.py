"""`notifications/resources/list_changed` when the index holds new sessions, and
`notifications/resources/updated` when a session a client subscribed to gets new steps.

Sessions are recorded by any process (this server's tools, another server, a harness writing
files): the live index is the one place that sees them all. `SessionWatch.run` polls how many
sessions the index holds and, when that changes, tells every client: those of the handshake
protocol (2025 revisions) on their connection, remembered by `remember` as their requests
arrive (the last request's session of each client reaches its connection's standalone
stream); those of the 2026 revision through `subscriptions/listen` (the SDK's `ListenHandler`
fed by `bus`). A subscription (`resources/subscribe`, or a listen stream's
`resourceSubscriptions`) names a session or its recipe; each poll compares the step count the
index holds of each watched session with the last one seen.
"""

import logging
from collections import Counter, OrderedDict
from typing import Any

import anyio
from mcp import types
from mcp.server import ServerRequestContext
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    ResourcesListChanged,
    ResourceUpdated,
)
from mcp.shared.exceptions import MCPError

from engine import KnowhowError
from server.resources import SESSION_TEMPLATE, parse
from server.state import ServerState

log = logging.getLogger(__name__)
POLL_SECONDS = 1.0
MAX_SUBSCRIPTIONS = 100
"""Resources one client may subscribe to at once."""
MAX_WATCHED = 1000
"""Sessions watched for new steps at once (one small index query each per poll)."""


class SessionWatch:
    def __init__(self, limit: int) -> None:
        self.bus = InMemorySubscriptionBus()
        self.clients: OrderedDict[str, ServerSession] = OrderedDict()
        """Each handshake-protocol client's latest request session, by client (MCP session id
        over HTTP, "" over stdio); the `limit` most recently active ones (as many as the HTTP
        transport keeps sessions): a client gone quiet longest is forgotten first."""
        self.limit = limit
        self.subscribed: dict[str, set[str]] = {}
        """Each handshake-protocol client's subscribed URIs."""
        self.listening: Counter[str] = Counter()
        """URIs the open listen streams (2026) subscribed to, with how many streams did."""
        self.steps: dict[str, int] = {}
        """The step count last seen of each watched session."""
        self._listen = ListenHandler(self.bus)

    def remember(self, client: str, session: ServerSession) -> None:
        self.clients[client] = session
        self.clients.move_to_end(client)
        while len(self.clients) > self.limit:
            forgotten, _ = self.clients.popitem(last=False)
            self.subscribed.pop(forgotten, None)

    async def subscribe(self, state: ServerState, client: str, uri: str) -> None:
        session_id = _watchable(uri)
        uris = self.subscribed.setdefault(client, set())
        if uri not in uris and len(uris) >= MAX_SUBSCRIPTIONS:
            raise MCPError(
                types.INVALID_PARAMS, f"at most {MAX_SUBSCRIPTIONS} subscriptions per client"
            )
        await self._baseline(state, session_id)
        uris.add(uri)

    def unsubscribe(self, client: str, uri: str) -> None:
        self.subscribed.get(client, set()).discard(uri)

    async def listen(
        self,
        ctx: ServerRequestContext[ServerState, Any],
        params: types.SubscriptionsListenRequestParams,
    ) -> types.SubscriptionsListenResult:
        """The SDK's listen stream, its resource subscriptions watched while it is open."""
        uris = list(params.notifications.resource_subscriptions or ())[:MAX_SUBSCRIPTIONS]
        for uri in uris:
            await self._baseline(ctx.lifespan_context, _watchable(uri))
        self.listening.update(uris)
        try:
            return await self._listen(ctx, params)
        finally:
            self.listening.subtract(uris)
            self.listening = +self.listening  # drop the URIs no stream listens to any more

    async def _baseline(self, state: ServerState, session_id: str) -> None:
        if session_id not in self.steps:
            counts = await self._counts(state, [session_id])
            self.steps[session_id] = counts.get(session_id, 0)

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
            await self._updates(state)

    def _watched(self) -> dict[str, set[str]]:
        """Session id -> the subscribed URIs naming it (its own or its recipe's)."""
        watched: dict[str, set[str]] = {}
        for uri in [*self.listening, *(u for uris in self.subscribed.values() for u in uris)]:
            watched.setdefault(_watchable(uri), set()).add(uri)
        return dict(list(watched.items())[:MAX_WATCHED])

    async def _updates(self, state: ServerState) -> None:
        """`resources/updated` for each URI of a watched session whose step count changed."""
        watched = self._watched()
        for session_id in set(self.steps) - set(watched):
            del self.steps[session_id]
        if not watched:
            return
        counts = await self._counts(state, list(watched))
        for session_id, now in counts.items():
            before = self.steps.setdefault(session_id, now)
            if now != before:
                self.steps[session_id] = now
                await self._updated(watched[session_id])

    async def _updated(self, uris: set[str]) -> None:
        for client, subscribed in list(self.subscribed.items()):
            session = self.clients.get(client)
            if session is None:
                continue
            for uri in sorted(subscribed & uris):
                try:
                    await session.send_resource_updated(uri)
                except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                    break
        for uri in sorted(uris):
            if self.listening[uri] > 0:
                await self.bus.publish(ResourceUpdated(uri=uri))

    async def notify(self) -> None:
        for client, session in list(self.clients.items()):
            try:
                await session.send_resource_list_changed()
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                self.clients.pop(client, None)
        await self.bus.publish(ResourcesListChanged())

    @staticmethod
    async def _counts(state: ServerState, session_ids: list[str]) -> dict[str, int]:
        """The step count the index holds of each session (0: none yet), in one worker-thread
        call after one refresh; {} when the index cannot answer now (try again next poll)."""

        def counted() -> dict[str, int]:
            listed = (state.engine.session(session_id) for session_id in session_ids)
            return {
                session_id: found.stepCount if found is not None else 0
                for session_id, found in zip(session_ids, listed, strict=True)
            }

        try:
            return await state.query(counted)
        except KnowhowError:
            return {}

    @staticmethod
    async def _count(state: ServerState) -> int | None:
        try:
            return (await state.query(state.engine.document_counts)).get("sessions")
        except KnowhowError:  # no index yet, or a damaged one: status says so; try again
            log.debug("session count unavailable", exc_info=True)
            return None


def _watchable(uri: str) -> str:
    """The session a subscribable URI names: a session's or its recipe's (the others do not
    change, or change all the time: the status)."""
    address = parse(uri)
    if address.kind not in ("session", "recipe"):
        raise MCPError(
            types.INVALID_PARAMS,
            f"only sessions and recipes are subscribed to ({SESSION_TEMPLATE}[/recipe])",
        )
    return address.session_id
