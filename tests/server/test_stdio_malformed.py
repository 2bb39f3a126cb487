"""Attack: malformed stdio lines get a JSON-RPC error and the server serves on.

A real `knowhow serve` process spoken to line by line over its pipes, as a client library
cannot send these lines: each is answered (-32700 with id null when the line is not JSON,
-32600 with the request's id when it is JSON the SDK refuses), then a tool call still works.
"""

import json
import os
import selectors
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
from pydantic import ValidationError

from server.transport.stdio import malformed_reply
from tests.server.mcp_helpers import REPO, START_TIMEOUT, knowhow_command, serve_args, stop

REPLY_TIMEOUT = 30.0
"""Generous: a loaded CI machine must not fail the test; speed is not what it checks."""

MALFORMED = [
    ("truncated JSON", '{"jsonrpc": "2.0", "id": 11, "method": "tools/ca', None, -32700),
    (
        "lone surrogate",
        '{"jsonrpc": "2.0", "id": 12, "method": "tools/call", "params": {"name": '
        '"mm_knowledge_search", "arguments": {"query": "\\ud800"}}}',
        12,
        -32600,
    ),
    (
        "nesting 500 deep",
        '{"jsonrpc": "2.0", "id": "deep", "method": "tools/call", "params": {"name": "x", '
        '"arguments": {"a": ' + "[" * 500 + "]" * 500 + "}}}",
        "deep",
        -32600,
    ),
    ("not a message", '{"jsonrpc": "2.0", "id": 14, "method": 42}', 14, -32600),
    ("not JSON-RPC", "[1, 2, 3]", None, -32600),
]


class Wire:
    """A server process and its stdio pipes, one JSON-RPC message per line."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.selector = selectors.DefaultSelector()
        assert proc.stdout is not None
        self.selector.register(proc.stdout, selectors.EVENT_READ)
        self.buffer = b""

    def send(self, line: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode("utf-8", "surrogatepass") + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = REPLY_TIMEOUT) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            assert left > 0, "no reply: the client would hang"
            if self.selector.select(left):
                assert self.proc.stdout is not None
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                assert chunk, f"server exited with {self.proc.poll()}"
                self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        message: dict[str, Any] = json.loads(line)
        return message

    def request(self, request_id: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.send(
            json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
        )
        return self.receive()


@pytest.fixture
def wire(root: Path, index: Path, log: Path) -> Iterator[Wire]:
    with log.open("a") as errlog:
        proc = subprocess.Popen(
            [*knowhow_command(), *serve_args(root, index)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
        )
    connection = Wire(proc)
    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw-test", "version": "0"},
        }
        reply = connection.request(1, "initialize", hello)
        assert "result" in reply, reply
        connection.send(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        yield connection
    finally:
        stop(proc)
        for pipe in (proc.stdin, proc.stdout):
            if pipe is not None:
                pipe.close()
        connection.selector.close()


def test_every_malformed_line_is_answered_and_the_server_serves_on(wire: Wire) -> None:
    for case, line, request_id, code in MALFORMED:
        wire.send(line)
        reply = wire.receive(START_TIMEOUT + REPLY_TIMEOUT)
        assert reply["id"] == request_id, (case, reply)
        assert reply["error"]["code"] == code, (case, reply)
    answer = wire.request(2, "tools/call", {"name": "mm_knowledge_status", "arguments": {}})
    assert answer["id"] == 2
    assert json.loads(answer["result"]["content"][0]["text"])["ok"] is True


@pytest.mark.parametrize(("case", "line", "request_id", "code"), MALFORMED)
def test_the_reply_names_the_request_when_the_line_has_one(
    case: str, line: str, request_id: object, code: int
) -> None:
    try:
        types.jsonrpc_message_adapter.validate_json(line, by_name=False)
    except ValidationError as exc:  # what the SDK's stdio transport puts on the read stream
        reply = malformed_reply(exc)
    else:
        pytest.fail(f"{case}: the SDK read it")
    assert (reply.id, reply.error.code) == (request_id, code)
