"""Every stdio line gets an answer: malformed ones a JSON-RPC error, so no client waits forever.

`StdinLines` reads stdin on a daemon thread, so Ctrl-C (SIGINT) stops the server even while
stdin is open (the SDK's reader is a worker thread a cancellation waits for), and at the end of
stdin it waits until every request already read is answered (`Pending`, fed by `AnsweredWrites`)
before the server stops: `initialize`, `initialized` and a `tools/call` piped in at once get
both answers.

The SDK's stdio transport turns a line it cannot read as a JSON-RPC message into an exception
on the read stream, and its server drops it: a client that sent a truncated line, a lone
surrogate or 500 nested arrays (the SDK reads about 200) never hears back.
`AnsweredReadStream` stands between the two: it answers such a line on the write stream and
keeps serving. The reply is `-32700 Parse error` with id null when the line is not JSON; when
it is JSON the SDK refuses (lone surrogates, deep nesting, not a JSON-RPC message) it is
`-32600 Invalid Request` with the request's id where the line has one, so the client's
pending call ends.
"""

import io
import json
import os
import signal
import threading
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any, Self

import anyio
import anyio.from_thread
import anyio.lowlevel
import mcp_types as types
from mcp.shared._stream_protocols import ReadStream, WriteStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

ANSWER_WAIT_SECONDS = 300.0
"""How long the end of stdin waits for the answers of requests already read."""


class Pending:
    """Ids of the requests read and not answered yet."""

    def __init__(self) -> None:
        self.ids: set[object] = set()

    def read(self, line: str) -> None:
        request = _lenient_json(line)
        if isinstance(request, dict) and "method" in request and "id" in request:
            self.ids.add(_key(request["id"]))

    def answered(self, message: SessionMessage) -> None:
        reply = message.message
        if isinstance(reply, types.JSONRPCResponse | types.JSONRPCError):
            self.ids.discard(_key(reply.id))

    async def drained(self, seconds: float = ANSWER_WAIT_SECONDS) -> None:
        """Return once every request read is answered (or after `seconds`)."""
        with anyio.move_on_after(seconds):
            while self.ids:
                await anyio.sleep(0.01)


def _key(request_id: object) -> object:
    """1 and "1" are different ids; True is none."""
    return (type(request_id).__name__, request_id)


class StdinLines(anyio.AsyncFile[str]):
    """The process's stdin as lines, read on a daemon thread: nothing waits for a read of a
    stdin that stays open (Ctrl-C ends the server; the thread ends with the process). Handlers
    and the processes they start read the null device instead, as the SDK arranges it."""

    def __init__(self, pending: Pending) -> None:
        wire = os.dup(0)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.close(null)
        super().__init__(
            io.TextIOWrapper(os.fdopen(wire, "rb"), encoding="utf-8", errors="replace")
        )
        self.pending = pending

    async def __aiter__(self) -> AsyncIterator[str]:
        send, receive = anyio.create_memory_object_stream[str | None](16)
        token = anyio.lowlevel.current_token()

        def pump() -> None:
            try:
                for line in self.wrapped:
                    anyio.from_thread.run(send.send, line, token=token)
                anyio.from_thread.run(send.send, None, token=token)
            except (RuntimeError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return  # the server stopped first

        threading.Thread(target=pump, name="knowhow stdin", daemon=True).start()
        async with receive:
            async for line in receive:
                if line is None:
                    break
                self.pending.read(line)
                yield line
        await self.pending.drained()


async def stopped_by_sigint(scope: anyio.CancelScope) -> None:
    """Cancel `scope` on Ctrl-C: the server closes what it opened (the index writer's lease,
    the browser) and exits, whether or not stdin is still open."""
    with anyio.open_signal_receiver(signal.SIGINT) as signals:
        async for _ in signals:
            scope.cancel()
            return


class ClosedOnExit:
    """`async with` a stream closes it (`aclose`) at the end of the block."""

    async def aclose(self) -> None:
        raise NotImplementedError

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


class AnsweredWrites(ClosedOnExit):
    """The transport's write stream, telling `Pending` which requests are answered."""

    def __init__(self, inner: WriteStream[SessionMessage], pending: Pending) -> None:
        self._inner = inner
        self._pending = pending

    async def send(self, item: SessionMessage) -> None:
        await self._inner.send(item)
        self._pending.answered(item)

    async def aclose(self) -> None:
        await self._inner.aclose()


class AnsweredReadStream(ClosedOnExit):
    """The transport's read stream without its malformed lines, each answered on `replies`."""

    def __init__(
        self,
        inner: ReadStream[SessionMessage | Exception],
        replies: WriteStream[SessionMessage],
    ) -> None:
        self._inner = inner
        self._replies = replies

    @property
    def last_context(self) -> Any:
        """The sender's context of the last message (the SDK restores it for handlers)."""
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            await self._replies.send(SessionMessage(malformed_reply(item)))

    async def aclose(self) -> None:
        await self._inner.aclose()

    def __aiter__(self) -> Self:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None


def malformed_reply(exc: Exception) -> types.JSONRPCError:
    """The JSON-RPC error answering a line the transport could not read as a message."""
    errors = exc.errors() if isinstance(exc, ValidationError) else []
    unparsed = next((e for e in errors if e["type"] == "json_invalid"), None)
    if unparsed is not None:
        message = _lenient_json(unparsed["input"])
        if message is None:
            return _error(None, types.PARSE_ERROR, f"Parse error: {unparsed['msg']}")
        reason = f"Invalid Request: the server cannot read this JSON ({unparsed['msg']})"
        return _error(_request_id(message), types.INVALID_REQUEST, reason)
    ids = (_request_id(e["input"]) for e in errors)
    return _error(
        next((i for i in ids if i is not None), None),
        types.INVALID_REQUEST,
        "Invalid Request: not a JSON-RPC 2.0 request, notification or response",
    )


def _lenient_json(line: object) -> object | None:
    """The line as Python's own JSON reader sees it (it accepts lone surrogates and deeper
    nesting than the SDK's), or None when it is not JSON at all."""
    if not isinstance(line, str | bytes):
        return None
    try:
        message: object = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return message


def _request_id(message: object) -> types.RequestId | None:
    if not isinstance(message, dict):
        return None
    value = message.get("id")
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    return value


def _error(request_id: types.RequestId | None, code: int, message: str) -> types.JSONRPCError:
    return types.JSONRPCError(
        jsonrpc="2.0", id=request_id, error=types.ErrorData(code=code, message=message)
    )
