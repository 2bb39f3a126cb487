"""What slow HTTP clients may hold: a bounded number of connections, each for a bounded time
until its request has arrived.

The bearer token is checked once a request's headers are complete, so anyone who can reach the
port can open connections and send headers slowly, or never finish them. Unbounded, each such
connection held a file descriptor forever: ~1,100 of them exhausted a common limit of 1,024 open
files, after which every file the process opened failed, the live index's among them
(`scripts/adversary.py`, the slow-header attack). So the server's HTTP/1.1 protocol (uvicorn's
h11 one, bounded):

- closes a connection beyond `max_connections` as soon as it is accepted, with a 503; and
  accepts at most `backlog(max_connections)` connections per turn of the event loop (asyncio
  accepts up to the listen backlog before any of them is seen, uvicorn's default 2,048), so
  open connections never exceed `max_connections` by more than two turns' worth;
- closes a connection whose request (headers, then body) has not fully arrived
  `request_seconds` after the connection opened or its previous response ended. A request
  that has arrived may take as long as it needs (a long search, an event stream).
"""

import asyncio
import logging
import resource
from typing import ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

log = logging.getLogger(__name__)

BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: text/plain\r\nconnection: close\r\n"
    b"content-length: 33\r\n\r\ntoo many connections; retry later\n"
)
ARRIVING = (h11.IDLE, h11.SEND_BODY)
"""The client's h11 states while its request has not fully arrived."""


class BoundedH11Protocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol with the bounds above (set by `bounded_protocol`)."""

    max_connections: ClassVar[int]
    request_seconds: ClassVar[float]
    _deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        if len(self.connections) > self.max_connections:
            log.warning("HTTP: refused a connection, %d are open already", self.max_connections)
            transport.write(BUSY)
            transport.close()
            return
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        if not self.transport.is_closing():
            self._arm()  # the next request on this connection gets as long

    def connection_lost(self, exc: Exception | None) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        super().connection_lost(exc)

    def _arm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
        self._deadline = self.loop.call_later(self.request_seconds, self._too_slow)

    def _too_slow(self) -> None:
        if self.conn.their_state in ARRIVING and not self.transport.is_closing():
            log.warning(
                "HTTP: closed a connection whose request took over %gs", self.request_seconds
            )
            self.transport.close()


def backlog(max_connections: int) -> int:
    """The listen backlog, which is also how many connections asyncio accepts at a time."""
    return max(16, max_connections // 4)


def bounded_protocol(max_connections: int, request_seconds: float) -> type[BoundedH11Protocol]:
    """The protocol class for uvicorn's `http` setting. `max_connections` is lowered to half the
    process's open-file limit if that is less, so the index's files always find descriptors."""
    files, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if files != resource.RLIM_INFINITY and files // 2 < max_connections:
        log.warning(
            "HTTP: %d open files at most: serving at most %d connections, not %d",
            files,
            files // 2,
            max_connections,
        )
        max_connections = files // 2
    limits = {"max_connections": max_connections, "request_seconds": request_seconds}
    return type("BoundedH11Protocol", (BoundedH11Protocol,), limits)
