"""Reads in flight are bounded per client and in all, never take the threads light calls need,
and a read whose client has gone is never started.

Before these bounds every read ran on the thread pool all calls share: one client's flood of
costly reads took every thread (other clients' status calls waited minutes behind it) and was
computed to the end after its client had disconnected.
"""

import threading
from collections.abc import Awaitable, Callable

import anyio
import anyio.to_thread
import pytest
from starlette.requests import Request

from engine import NotFound
from server.workload import Busy, ClientGone, Workload, connection_gone, never_gone

pytestmark = pytest.mark.anyio

DEADLINE_SECONDS = 30.0


async def until(check: Callable[[], bool]) -> None:
    with anyio.fail_after(DEADLINE_SECONDS):
        while not check():
            await anyio.sleep(0.01)


def blocked(release: threading.Event, ran: list[str], name: str) -> Callable[[], str]:
    def action() -> str:
        ran.append(name)
        release.wait(DEADLINE_SECONDS)
        return name

    return action


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_one_client_beyond_its_bound_is_busy_and_others_still_get_turns() -> None:
    workload = Workload(in_all=2, per_client=2, waiting=8)
    release, ran, answers = threading.Event(), list[str](), list[str]()

    async def read(client: str, name: str) -> None:
        answers.append(await workload.run(client, never_gone, blocked(release, ran, name)))

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(read, "flood", "f1")
        tasks.start_soon(read, "flood", "f2")
        await until(lambda: len(ran) == 2)
        with pytest.raises(Busy, match="this client has 2 reads in flight"):
            await workload.run("flood", never_gone, lambda: "f3")
        tasks.start_soon(read, "other", "o1")
        await until(lambda: workload.threads.statistics().tasks_waiting == 1)
        # the shared pool's threads stay free for light calls and writes
        assert anyio.to_thread.current_default_thread_limiter().borrowed_tokens == 0
        assert await anyio.to_thread.run_sync(lambda: "status") == "status"
        release.set()
    assert sorted(answers) == ["f1", "f2", "o1"]


async def test_reads_beyond_the_waiting_bound_are_busy() -> None:
    workload = Workload(in_all=1, per_client=100, waiting=1)
    release, ran = threading.Event(), list[str]()
    async with anyio.create_task_group() as tasks:
        tasks.start_soon(workload.run, "", never_gone, blocked(release, ran, "running"))
        await until(lambda: ran == ["running"])
        tasks.start_soon(workload.run, "", never_gone, blocked(release, ran, "waiting"))
        await until(lambda: workload.threads.statistics().tasks_waiting == 1)
        with pytest.raises(Busy, match="the server is busy"):
            await workload.run("", never_gone, lambda: "third")
        release.set()
    assert ran == ["running", "waiting"]


async def test_a_read_whose_client_has_gone_never_runs() -> None:
    workload = Workload(in_all=1, per_client=8, waiting=8)
    release, ran = threading.Event(), list[str]()
    left = anyio.Event()

    async def gone() -> bool:
        return left.is_set()

    async with anyio.create_task_group() as tasks:
        tasks.start_soon(workload.run, "a", never_gone, blocked(release, ran, "running"))
        await until(lambda: ran == ["running"])
        outcome: list[BaseException] = []

        async def abandoned() -> None:
            try:
                await workload.run("b", gone, blocked(release, ran, "abandoned"))
            except ClientGone as exc:
                outcome.append(exc)

        tasks.start_soon(abandoned)
        await until(lambda: workload.threads.statistics().tasks_waiting == 1)
        left.set()
        await until(lambda: bool(outcome))
        release.set()
    assert ran == ["running"]


async def test_an_http_call_knows_when_its_connection_closed() -> None:
    messages = [{"type": "http.disconnect"}]

    async def receive() -> dict[str, str]:
        return messages[0]

    request = Request({"type": "http", "method": "POST", "headers": []}, receive)
    gone: Callable[[], Awaitable[bool]] = connection_gone(request)
    assert await gone()
    assert not await connection_gone(object())()


async def test_an_error_of_a_read_reaches_its_caller_as_itself() -> None:
    """A read's `KnowhowError` (an unknown session, say) must stay the error it is: the tool
    answers with its code, not with an internal error."""
    workload = Workload(in_all=1, per_client=1, waiting=0)

    def unknown() -> str:
        raise NotFound("no session 'mm-x'")

    with pytest.raises(NotFound, match="mm-x"):
        await workload.run("a", never_gone, unknown)
    assert await workload.run("a", never_gone, lambda: "next") == "next"
