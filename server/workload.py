"""How much engine work the server's clients may have in flight, and work nobody waits for.

Reads (search, summarize, sessions …) are blocking engine calls run on worker threads. Run on
the thread pool every call shares, a flood of costly reads from one client (hundreds of
concurrent `summarize` calls over HTTP) took every worker thread: other clients' light calls
(status, recording a step) queued behind it for minutes, and the flood kept computing answers
after its client had disconnected. So reads pass through a `Workload`:

- at most `in_all` reads run at once, on threads of their own (`threads`), so the shared pool
  always has threads for light calls and writes;
- at most `waiting` more wait for a turn (first come, first served); one beyond is refused
  with `MM_BUSY` at once, costing nothing;
- one client (one MCP session) has at most `per_client` reads running or waiting; one beyond
  is refused with `MM_BUSY`. Clients the server cannot tell apart (stdio, the stateless
  protocol: client "") are bounded by `in_all` and `waiting` only;
- a read whose client has gone (its HTTP connection closed) stops waiting for its turn and
  is never started; one already running finishes (a thread cannot be interrupted) and its
  answer is dropped. At most `in_all` answers are computed for nobody.
"""

from collections import Counter
from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import anyio.to_thread
from starlette.requests import Request

from engine import KnowhowError

T = TypeVar("T")
Gone = Callable[[], Awaitable[bool]]
"""Whether the client of a call has disconnected."""
GONE_POLL_SECONDS = 0.25


class Busy(KnowhowError):
    """Too many reads in flight (of this client, or of all clients): retry when one answered."""

    code = "MM_BUSY"


class ClientGone(KnowhowError):
    """The client disconnected before its read ran; nobody reads this answer."""


async def never_gone() -> bool:
    """The client of a stdio server, or of a call whose connection the server cannot see."""
    return False


class Workload:
    """The bounds above, for one server process (shared by every client)."""

    def __init__(self, *, in_all: int, per_client: int, waiting: int) -> None:
        self.threads = anyio.CapacityLimiter(in_all)
        self.per_client = per_client
        self.waiting = waiting
        self._of_client: Counter[str] = Counter()

    async def run(self, client: str, gone: Gone, action: Callable[[], T]) -> T:
        """`action()` on a worker thread once a turn is free; `Busy` when over a bound,
        `ClientGone` when the client left before the turn came."""
        self._admit(client)
        self._of_client[client] += 1
        try:
            answers: list[T] = []
            failures: list[Exception] = []
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tasks:
                    tasks.start_soon(_cancel_when_gone, gone, scope)
                    try:
                        answers.append(await anyio.to_thread.run_sync(action, limiter=self.threads))
                    except Exception as exc:  # raised as itself, not in the task group's group
                        failures.append(exc)
                    tasks.cancel_scope.cancel()
            if failures:
                raise failures[0]
            if not answers:
                raise ClientGone("the client disconnected before this call ran")
            return answers[0]
        finally:
            self._of_client[client] -= 1
            if not self._of_client[client]:
                del self._of_client[client]

    def _admit(self, client: str) -> None:
        if client and self._of_client[client] >= self.per_client:
            raise Busy(
                f"this client has {self.per_client} reads in flight already (at most "
                f"{self.per_client}, KNOWHOW_CLIENT_QUERIES): retry when one has answered"
            )
        turns = self.threads.statistics()
        if turns.borrowed_tokens >= turns.total_tokens and turns.tasks_waiting >= self.waiting:
            raise Busy(
                f"the server is busy: {int(turns.total_tokens)} reads run and "
                f"{turns.tasks_waiting} wait (KNOWHOW_QUERIES_RUNNING, KNOWHOW_QUERIES_WAITING): "
                "retry in a few seconds"
            )


async def _cancel_when_gone(gone: Gone, scope: anyio.CancelScope) -> None:
    while not await gone():
        await anyio.sleep(GONE_POLL_SECONDS)
    scope.cancel()


def connection_gone(request: object) -> Gone:
    """For a call over HTTP, whether its connection has closed (Starlette's check, which never
    waits); `never_gone` for any other call (stdio)."""
    return request.is_disconnected if isinstance(request, Request) else never_gone
