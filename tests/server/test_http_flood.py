"""A flood of HTTP requests whose headers never finish, against a server with the common
1,024 open-file limit: the server holds a bounded number of them, closes each after a header
timeout, keeps indexing what is recorded meanwhile, and keeps its log small.

Without the bounds every connection took a descriptor until none was left: the live index's
thread died on the next file it opened (new steps were never indexed again, while status still
said "ok"), and asyncio logged a traceback for every refused accept.
"""

import contextlib
import json
import resource
import socket
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from adversary import slow_requests  # scripts/ is on pytest's pythonpath

from engine import KnowledgeEngine, SearchInput
from tests.server.mcp_helpers import SEND_FLOW, eventually, http_client, ok, start_http, stop

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

OPEN_FILES = 1024
SLOW_REQUESTS = 1100
LOG_BYTES = 1 << 20


def common_open_file_limit() -> None:
    resource.setrlimit(resource.RLIMIT_NOFILE, (OPEN_FILES, OPEN_FILES))


@contextlib.contextmanager
def open_files_for_the_flood() -> Iterator[None]:
    """This process needs a descriptor per slow request: raise its soft limit for the test."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = SLOW_REQUESTS + 512
    if hard != resource.RLIM_INFINITY and hard < wanted:
        pytest.skip(f"the hard open-file limit ({hard}) is below {wanted}")
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, wanted), hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


def held(sock: socket.socket) -> bool:
    """Whether the server still holds this connection open without answering it."""
    try:
        return sock.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) is None
    except BlockingIOError:
        return True
    except OSError:
        return False


def searchable(engine: KnowledgeEngine, *step_ids: str) -> Callable[[], Awaitable[bool]]:
    """A check for `eventually`: are these steps found by a search of the index?"""

    async def check() -> bool:
        engine.refresh()
        page = engine.search(SearchInput(query="send", scope="all", limit=50))
        return set(step_ids) <= {r.stepId for r in page.results}

    return check


def recorded_by_another_process(root: Path, session: str, number: int) -> str:
    """A step file as another recorder writes it; returns its step id."""
    name = f"{number:04d}-mm_click"
    step = {
        "timestamp": "2026-01-01T00:00:00.000Z",
        "sessionId": session,
        "tool": {"name": "mm_click", "target": {"testId": "send-amount-input"}},
        "outcome": {"ok": True},
    }
    (root / session / "steps" / f"{name}.json").write_text(json.dumps(step))
    return f"{session}/{name}"


async def test_slow_requests_are_bounded_and_indexing_goes_on(
    root: Path, index: Path, log: Path
) -> None:
    proc, port = start_http(root, index, log, preexec=common_open_file_limit)
    flood: list[socket.socket] = []

    async def few_held() -> bool:
        return sum(held(sock) for sock in flood) < OPEN_FILES // 2

    async def none_held() -> bool:
        return not any(held(sock) for sock in flood)

    try:
        async with http_client(port) as client:
            started = await ok(client, "mm_knowledge_start_session", {"flowTags": ["send"]})
            session = started["sessionId"]
            step = {**SEND_FLOW[1], "sessionId": session}
            first = (await ok(client, "mm_knowledge_record_step", step))["stepId"]
        engine = KnowledgeEngine(root, index)
        await eventually(searchable(engine, first))

        with open_files_for_the_flood():
            flood = slow_requests(port, SLOW_REQUESTS)
            await eventually(few_held, 60)
            # Recorded meanwhile by another process (the flood leaves no connection for one).
            during = recorded_by_another_process(root, session, 50)
            await eventually(searchable(engine, during))
            await eventually(none_held)  # each closed after the header timeout

        async with http_client(port) as client:
            step = {**SEND_FLOW[2], "sessionId": session}
            after = (await ok(client, "mm_knowledge_record_step", step))["stepId"]
            await eventually(searchable(engine, after))
            status = await ok(client, "mm_knowledge_status", {})
            assert status["health"] == "ok" and status["live"]["watching"] is True
        assert log.stat().st_size < LOG_BYTES
    finally:
        for sock in flood:
            sock.close()
        stop(proc)
