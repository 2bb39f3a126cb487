"""The `knowhow` script's commands answered by a running HTTP server.

`ServedCli.attach` runs inside the server's lifespan: with the index open it writes the
endpoint file (`server.cli.endpoint`) and removes it when the server stops. Its two routes sit
beside `/mcp`, behind the same Host/Origin/token guard: `identity` answers a nonce with the HMAC
of this run's secret (the script's proof that the file is this server's), `run` runs a command
line with the secret: the same `server.cli.commands.run` the script runs in-process, on the
server's engine and live index (`server.cli.answer.SERVED`), with what it prints captured and
sent back. Only the commands that read (`server.cli.client.SERVED`), only for this root, index
and synonyms file.

Commands print to `sys.stdout` / `sys.stderr` and the two rich consoles, so runs take turns
(one lock) while those are pointed at the run's buffers; each run takes milliseconds.
"""

import hmac
import io
import logging
import os
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from typing import Any

import anyio.to_thread
import orjson
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from server.cli import render
from server.cli.answer import SERVED, Served
from server.cli.client import SERVED as SERVED_COMMANDS
from server.cli.client import same_path
from server.cli.endpoint import (
    IDENTITY_PATH,
    RUN_PATH,
    SECRET_HEADER,
    Endpoint,
    new_secret,
    proof,
    remove_endpoint,
    write_endpoint,
)
from server.settings import ServerSettings
from server.state import ServerState

log = logging.getLogger(__name__)

MAX_REQUEST_BYTES = 1 << 20
"""A command line is a few hundred bytes; anything much larger is not one."""


class TerminalBuffer(io.StringIO):
    """A captured stream that says whether the script's own stream is a terminal, so tables
    are drawn (or tab-separated) as they would be there."""

    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


class ServedCli:
    """The endpoint file and the two routes of one HTTP server."""

    def __init__(self, settings: ServerSettings) -> None:
        self.settings = settings
        self.secret = new_secret()
        self.state: ServerState | None = None
        self.turns = threading.Lock()

    @asynccontextmanager
    async def attach(self, state: ServerState) -> AsyncIterator[None]:
        """Serve the script while `state` is open: the endpoint file exists exactly then. A
        server on port 0 (the system's choice) cannot name its port here and writes none."""
        self.state = state
        settings, pid = self.settings, os.getpid()
        if settings.port:
            synonyms = str(settings.synonyms.absolute()) if settings.synonyms else None
            started = datetime.now(UTC).isoformat(timespec="seconds")
            endpoint = Endpoint(
                pid, settings.host, settings.port, str(settings.root), str(settings.index),
                synonyms, self.secret, started,
            )  # fmt: skip
            try:
                write_endpoint(endpoint, str(settings.index))
            except OSError as exc:  # a read-only index folder: served over MCP only
                log.warning("cannot write the endpoint file in %s: %s", settings.index, exc)
        try:
            yield
        finally:
            self.state = None
            remove_endpoint(str(settings.index), pid)

    def routes(self) -> list[Route]:
        return [
            Route(IDENTITY_PATH, self.identity, methods=["POST"]),
            Route(RUN_PATH, self.run, methods=["POST"]),
        ]

    async def identity(self, request: Request) -> Response:
        body = await json_body(request)
        nonce = body.get("nonce") if isinstance(body, dict) else None
        if not isinstance(nonce, str) or not 16 <= len(nonce) <= 128:
            return PlainTextResponse("a nonce of 16 to 128 characters", status_code=400)
        return JSONResponse({"proof": proof(self.secret, nonce), "pid": os.getpid()})

    async def run(self, request: Request) -> Response:
        presented = request.headers.get(SECRET_HEADER, "")
        if not hmac.compare_digest(presented.encode(), self.secret.encode()):
            return PlainTextResponse("not this server's secret", status_code=403)
        body = await json_body(request)
        state = self.state
        if state is None:
            return PlainTextResponse("the index is not open", status_code=503)
        refused = self.refusal(body)
        if refused:
            return PlainTextResponse(refused, status_code=409)
        answer = await anyio.to_thread.run_sync(self.answer, state, body)
        return JSONResponse(answer)

    def refusal(self, body: Any) -> str | None:
        """Why this server must not answer `body` (None: it may)."""
        if not isinstance(body, dict) or not isinstance(argv := body.get("argv"), list):
            return "not a command line"
        if not argv or not all(isinstance(word, str) for word in argv):
            return "not a command line"
        if argv[0] not in SERVED_COMMANDS:
            return f"{argv[0]!r} is not answered by a server"
        settings = self.settings
        synonyms = str(settings.synonyms.absolute()) if settings.synonyms else None
        for key, mine in (("root", settings.root), ("index", settings.index)):
            if not isinstance(body.get(key), str) or not same_path(body[key], str(mine)):
                return f"this server serves {key} {mine}"
        if body.get("synonyms") != synonyms:
            return "this server uses other synonyms"
        return None

    def answer(self, state: ServerState, body: dict[str, Any]) -> dict[str, Any]:
        """Run the command line as the script would, on this server's index; what it printed
        and its exit status."""
        from server.cli.commands import run

        session = body.get("session")
        settings = self.settings.model_copy(
            update={"session": session if isinstance(session, str) else None}
        )
        stdout = TerminalBuffer(body.get("stdoutTty") is True)
        stderr = TerminalBuffer(body.get("stderrTty") is True)
        columns = body.get("columns")
        width = columns if isinstance(columns, int) and 20 <= columns <= 1000 else 80
        with self.turns:
            state.engine.refresh()
            token = SERVED.set(Served(settings, state.engine, state.live))
            try:
                with render.printing_to(stdout, stderr, width):
                    code = run(list(body["argv"]))
            finally:
                SERVED.reset(token)
        return {"exit": code, "stdout": stdout.getvalue(), "stderr": stderr.getvalue()}


async def json_body(request: Request) -> Any:
    """The request's JSON, read up to `MAX_REQUEST_BYTES`; None when it is not JSON."""
    data = bytearray()
    async for chunk in request.stream():
        data += chunk
        if len(data) > MAX_REQUEST_BYTES:
            return None
    try:
        return orjson.loads(bytes(data))
    except orjson.JSONDecodeError:
        return None
