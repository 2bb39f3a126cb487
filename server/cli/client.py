"""Answer a command through a running server of the same knowledge root and index.

A command a server can answer (`SERVED`) finds the server's endpoint file in the index folder
(`server.cli.endpoint`), believes it only when it names this root, index and synonyms file, a
loopback address and a live pid, and when the server proves it knows the file's secret; then it
sends the command line and prints what the server printed, with its exit status. The server runs
the very same command (`server.cli.commands.run`) on its open index, so the answer is the one an
in-process run gives, without loading the engine in this process.

Nothing here fails a command: no endpoint file means "run it here" silently; an endpoint that
cannot be used is one line on stderr saying why, and the command runs here. Short timeouts
bound the cost of a server that hangs. Standard library only (the point is a fast start).
"""

import hmac
import json
import os
import socket
import sys
import time
from collections.abc import Mapping
from typing import Any

from server.cli.endpoint import (
    IDENTITY_PATH,
    RUN_PATH,
    SECRET_HEADER,
    Endpoint,
    EndpointRefused,
    proof,
    read_endpoint,
)

SERVED = frozenset({"search", "last", "sessions", "summarize", "timeline", "status"})
"""The commands that only read the index: a server of the same root answers them alike."""
IN_PROCESS_ENV = "KNOWHOW_IN_PROCESS"
"""Set to 1 to answer in this process even when a server is running."""
TIMEOUT_ENV = "KNOWHOW_SERVER_TIMEOUT"
CONNECT_SECONDS = 1.0
"""Connecting and proving identity: a loopback server does both in milliseconds."""
ANSWER_SECONDS = 30.0
"""How long an answer may take (KNOWHOW_SERVER_TIMEOUT) before the command runs here."""
LOOPBACK = frozenset({"127.0.0.1", "::1", "localhost"})
DEFAULT_ROOT = "test-artifacts/llm-knowledge"
DEFAULT_INDEX = "index-data"


class NotServed(Exception):
    """The server cannot answer this command; the message says why (one line)."""


def answer(argv: list[str], env: Mapping[str, str] = os.environ) -> int | None:
    """Answer `argv` through a running server: its exit status, its output written here. None
    when the command is to run in this process (after one line on stderr when a server was
    found but could not be used)."""
    if not argv or argv[0] not in SERVED or "--help" in argv or env.get(IN_PROCESS_ENV) == "1":
        return None
    try:
        reply = ask(argv, env)
    except NotServed as exc:
        sys.stderr.write(f"knowhow: {exc}; answering in this process\n")
        return None
    if reply is None:
        return None
    sys.stdout.write(reply["stdout"])
    sys.stderr.write(reply["stderr"])
    return int(reply["exit"])


def ask(argv: list[str], env: Mapping[str, str]) -> dict[str, Any] | None:
    """The server's reply to `argv` (`exit`, `stdout`, `stderr`), None when no server of this
    index has written an endpoint file; `NotServed` when one did and it cannot be used."""
    root, index, synonyms = where(argv, env)
    endpoint = believed(root, index, synonyms, env)
    if endpoint is None:
        return None
    request = {"argv": argv, "root": root, "index": index, "synonyms": synonyms}
    request |= {"session": env.get("KNOWHOW_SESSION")} | terminal()
    headers = {SECRET_HEADER: endpoint.secret} | authorization(env)
    reply = post(endpoint, RUN_PATH, request, headers, answer_seconds(env))
    if not isinstance(reply.get("exit"), int) or not all(
        isinstance(reply.get(stream), str) for stream in ("stdout", "stderr")
    ):
        raise NotServed(f"the server on port {endpoint.port} answered something else")
    return reply


def believed(
    root: str, index: str, synonyms: str | None, env: Mapping[str, str]
) -> Endpoint | None:
    """The endpoint of a server answering for this root, index and synonyms, once it proved
    it is the one that wrote the file; None when there is no endpoint file, `NotServed` when
    there is one that cannot be believed."""
    try:
        endpoint = read_endpoint(index)
    except EndpointRefused as exc:
        raise NotServed(str(exc)) from None
    if endpoint is not None:
        trusted(endpoint, root, index, synonyms)
        proves_identity(endpoint, env)
    return endpoint


def where(argv: list[str], env: Mapping[str, str]) -> tuple[str, str, str | None]:
    """The root, index and synonyms file this command would use, as `Settings` decides them:
    --root / --index, else KNOWHOW_ROOT / KNOWHOW_INDEX, else the defaults; absolute."""
    root = option(argv, "--root") or env.get("KNOWHOW_ROOT") or DEFAULT_ROOT
    index = option(argv, "--index") or env.get("KNOWHOW_INDEX") or DEFAULT_INDEX
    synonyms = env.get("KNOWHOW_SYNONYMS")
    return absolute(root), absolute(index), absolute(synonyms) if synonyms else None


def absolute(path: str) -> str:
    return os.path.join(os.getcwd(), os.path.expanduser(path))


def option(argv: list[str], name: str) -> str | None:
    """The value of `name` in `argv` (`--root X` or `--root=X`; the last one wins, as in Click)."""
    found = None
    for position, word in enumerate(argv):
        if word == name and position + 1 < len(argv):
            found = argv[position + 1]
        elif word.startswith(name + "="):
            found = word[len(name) + 1 :]
    return found


def trusted(endpoint: Endpoint, root: str, index: str, synonyms: str | None) -> None:
    """The endpoint serves this root, index and synonyms, on loopback, from a live process."""
    if not same_path(endpoint.root, root) or not same_path(endpoint.index_dir, index):
        raise NotServed(
            f"the running server (pid {endpoint.pid}) serves {endpoint.root} with index "
            f"{endpoint.index_dir}, not {root}"
        )
    if (endpoint.synonyms or None) != synonyms:
        raise NotServed(f"the running server (pid {endpoint.pid}) uses other synonyms")
    if endpoint.host not in LOOPBACK:
        raise NotServed(f"the running server listens on {endpoint.host}, not on loopback")
    if not alive(endpoint.pid):
        raise NotServed(f"the server that wrote {index}/knowhow-server.json has stopped")


def same_path(claimed: str, path: str) -> bool:
    return os.path.realpath(claimed) == os.path.realpath(path)


def alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def proves_identity(endpoint: Endpoint, env: Mapping[str, str]) -> None:
    """Whatever listens on the port answers a fresh nonce with the HMAC of the endpoint's
    secret; anything else (another program, another server) never sees the query."""
    nonce = os.urandom(16).hex()
    reply = post(endpoint, IDENTITY_PATH, {"nonce": nonce}, authorization(env), CONNECT_SECONDS)
    answered = str(reply.get("proof", "")).encode()
    if not hmac.compare_digest(answered, proof(endpoint.secret, nonce).encode()):
        raise NotServed(f"what listens on port {endpoint.port} is not the server that wrote it")


def post(
    endpoint: Endpoint, path: str, body: dict[str, Any], headers: dict[str, str], seconds: float
) -> dict[str, Any]:
    """POST JSON to the server, a JSON object back within `seconds`; anything else (no
    connection, a timeout, another status, no JSON) is `NotServed`."""
    where = f"the server (pid {endpoint.pid}, port {endpoint.port})"
    try:
        status, data = exchange(endpoint, request_bytes(endpoint, path, body, headers), seconds)
    except TimeoutError:
        raise NotServed(f"{where} did not answer within {seconds:g} s") from None
    except OSError as exc:
        raise NotServed(f"{where} cannot be reached ({exc.strerror or exc})") from None
    if status != 200:
        said = " ".join(data[:200].decode(errors="replace").split())
        raise NotServed(f"{where} answered {status} {said}".rstrip())
    try:
        reply = json.loads(data)
    except ValueError:
        reply = None
    if not isinstance(reply, dict):
        raise NotServed(f"{where} answered no JSON object")
    return reply


def request_bytes(
    endpoint: Endpoint, path: str, body: dict[str, Any], headers: dict[str, str]
) -> bytes:
    """One HTTP/1.1 POST, the connection closed after the answer."""
    payload = json.dumps(body).encode()
    host = f"[{endpoint.host}]" if ":" in endpoint.host else endpoint.host
    lines = [f"POST {path} HTTP/1.1", f"Host: {host}:{endpoint.port}", "Connection: close"]
    lines += ["Content-Type: application/json", f"Content-Length: {len(payload)}"]
    lines += [f"{name}: {value}" for name, value in headers.items()]
    if any("\r" in line or "\n" in line for line in lines):
        raise NotServed("a header value holds a line break (KNOWHOW_TOKEN?)")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + payload


def exchange(endpoint: Endpoint, request: bytes, seconds: float) -> tuple[int, bytes]:
    """Send `request`, read the whole answer (until the server closes) within `seconds`: its
    status and body. A server that answers with chunks is not this one."""
    deadline = time.monotonic() + seconds
    received = bytearray()
    with socket.create_connection((endpoint.host, endpoint.port), CONNECT_SECONDS) as sock:
        sock.sendall(request)
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError
            sock.settimeout(left)
            chunk = sock.recv(1 << 16)
            if not chunk:
                break
            received += chunk
    head, _, data = bytes(received).partition(b"\r\n\r\n")
    status_line, *header_lines = head.decode("latin-1").split("\r\n")
    parts = status_line.split(" ", 2)
    if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
        raise NotServed(f"what listens on port {endpoint.port} does not speak HTTP")
    if any(line.lower().startswith("transfer-encoding:") for line in header_lines):
        raise NotServed(f"what listens on port {endpoint.port} is not the server that wrote it")
    return int(parts[1]), data


def authorization(env: Mapping[str, str]) -> dict[str, str]:
    """The bearer token of a server started with one (KNOWHOW_TOKEN)."""
    token = env.get("KNOWHOW_TOKEN")
    return {"Authorization": f"Bearer {token}"} if token else {}


def answer_seconds(env: Mapping[str, str]) -> float:
    try:
        return max(float(env.get(TIMEOUT_ENV, ANSWER_SECONDS)), CONNECT_SECONDS)
    except ValueError:
        return ANSWER_SECONDS


def terminal() -> dict[str, Any]:
    """What the server needs to print as this process would: which streams are terminals and
    how wide."""
    try:
        columns = os.get_terminal_size(sys.stdout.fileno()).columns
    except (OSError, ValueError):
        columns = (
            int(os.environ.get("COLUMNS", "80")) if os.environ.get("COLUMNS", "").isdigit() else 80
        )
    return {"stdoutTty": sys.stdout.isatty(), "stderrTty": sys.stderr.isatty(), "columns": columns}
