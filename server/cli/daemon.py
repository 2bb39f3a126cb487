"""`knowhow daemon start|status|stop`: a background server of this root and index, so the
`knowhow` script's reading commands are answered in milliseconds (`server.cli.client`).

`start` runs `knowhow serve --transport http` on 127.0.0.1 (a free port unless --port) in a
session of its own, its stderr appended to `knowhow-daemon.log` in the index folder, and returns
once the server has written its endpoint file and proved it is the one that wrote it. Starts
(and stops) take turns on a lock file in the index folder, so two started at once leave one
server: the second finds the first running. `status` says whether one runs; `stop` ends the
one that proves it serves this root and index (SIGTERM: it removes its endpoint file).
"""

import fcntl
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Annotated, Any

import typer

from engine import InvalidInput, KnowhowError, Settings
from server.cli.answer import Answer, Call, answers, existing_root
from server.cli.client import NotServed, alive, believed
from server.cli.endpoint import Endpoint
from server.cli.render import out

LOCK_FILE = "knowhow-daemon.lock"
LOG_FILE = "knowhow-daemon.log"
START_SECONDS = 180.0
"""How long a start waits for the server: a first index build of a large root takes a while."""
STOP_SECONDS = 30.0
ACTIONS = ("start", "status", "stop")


@answers()
def daemon(
    action: Annotated[str, typer.Argument(metavar="start|status|stop", help="What to do")],
    port: Annotated[
        int | None, typer.Option("--port", help="Port on 127.0.0.1 (default: a free one)")
    ] = None,
    *,
    call: Call,
) -> Answer:
    """Start, check or stop a background server of this root and index; while it runs,
    search, last, sessions, summarize, timeline and status are answered by it."""
    if action not in ACTIONS:
        raise InvalidInput("action", f"{action!r}: use start, status or stop")
    settings = call.settings
    if action == "status":
        found = described(settings)
    else:
        existing_root(settings)
        settings.index.mkdir(parents=True, exist_ok=True)
        with taking_turns(settings.index / LOCK_FILE):
            found = start(settings, port) if action == "start" else stop(settings)
    return found, partial(out.print, found["message"], markup=False)


def described(settings: Settings, **extra: Any) -> dict[str, Any]:
    """Whether a server answers for this root and index: its pid, address and start time."""
    try:
        endpoint = running(settings)
    except NotServed as exc:
        return {"running": False, "message": f"no server running ({exc})"} | extra
    if endpoint is None:
        return {"running": False, "message": "no server running"} | extra
    where = f"http://{endpoint.host}:{endpoint.port}/mcp"
    message = f"server running: pid {endpoint.pid}, {where}, since {endpoint.started}"
    found = {"running": True, "pid": endpoint.pid, "port": endpoint.port, "url": where}
    found |= {"started": endpoint.started, "log": str(settings.index / LOG_FILE)}
    return found | {"message": message} | extra


def running(settings: Settings) -> Endpoint | None:
    synonyms = str(settings.synonyms.absolute()) if settings.synonyms else None
    return believed(str(settings.root), str(settings.index), synonyms, os.environ)


def start(settings: Settings, port: int | None) -> dict[str, Any]:
    with_lock_held = described(settings)
    if with_lock_held["running"]:
        return with_lock_held | {"startedNow": False}
    log = settings.index / LOG_FILE
    command = [sys.executable, "-m", "server.cli", "serve", "--transport", "http"]
    command += ["--host", "127.0.0.1", "--port", str(port or free_port())]
    command += ["--root", str(settings.root), "--index", str(settings.index)]
    with log.open("ab") as errors:
        child = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=errors,
            start_new_session=True,  # outlives this command and its terminal
        )
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        if child.poll() is not None:
            raise KnowhowError(f"the server exited with status {child.returncode}: {tail(log)}")
        try:
            endpoint = running(settings)
        except NotServed:
            endpoint = None  # an older server's file, not yet replaced
        if endpoint is not None and endpoint.pid == child.pid:
            return described(settings, startedNow=True)
        time.sleep(0.1)
    child.terminate()
    raise KnowhowError(f"the server did not start within {START_SECONDS:.0f} s: {tail(log)}")


def stop(settings: Settings) -> dict[str, Any]:
    found = described(settings)
    if not found["running"]:
        return found | {"stoppedNow": False}
    pid = found["pid"]
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    if alive(pid):
        raise KnowhowError(f"the server (pid {pid}) is still running {STOP_SECONDS:.0f} s later")
    return {"running": False, "stoppedNow": True, "pid": pid, "message": f"stopped pid {pid}"}


@contextmanager
def taking_turns(lock: Path) -> Iterator[None]:
    """Hold `lock` exclusively (waiting for another start or stop to finish)."""
    with lock.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def tail(log: Path) -> str:
    """The last line the server wrote, or where to look."""
    lines = log.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else f"see {log}"
