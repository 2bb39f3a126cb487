"""A writer that stops making progress loses its lease (the writer half).

Attack: a `session.json` that is a FIFO blocked the writer forever while it held the lease, and a
SIGSTOPped writer was never replaced. Here one writer is blocked inside a batch (a real thread
waiting forever) or stopped (a real process, SIGSTOP); a standby takes over after
`stall_seconds`, writes a new generation, and every step stays searchable.
"""

import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from engine import KnowledgeEngine
from engine.index import IndexLayout, IndexWriter, sync_sessions
from engine.live import LiveIndex, WriterLease, writer_pid
from engine.records import KnowledgeStore
from tests.engine.test_live import REPO, WRITER_SCRIPT, hits, new_session, step, wait_for

STALL = 8.0
"""Long enough that a loaded machine never starves a beating writer into looking stalled
(a takeover test then waits about this long)."""


@pytest.fixture
def store(tmp_path: Path) -> KnowledgeStore:
    store = KnowledgeStore(tmp_path / "root")
    new_session(store, "mm-first1", "send")
    store.record_step(step("mm-first1", "coin-overview-send"))
    return store


def live_index(store: KnowledgeStore, index_dir: Path) -> LiveIndex:
    return LiveIndex(store, index_dir, retry_seconds=0.1, stall_seconds=STALL)


def test_a_lease_that_stops_beating_is_taken_over(tmp_path: Path) -> None:
    holder, standby = WriterLease(tmp_path), WriterLease(tmp_path, stall_seconds=STALL)
    assert holder.try_acquire() and not standby.try_acquire()
    holder.beat()
    assert not standby.try_acquire(), "a beating holder keeps its lease"
    stale = os.stat(holder.path).st_mtime - 2 * STALL
    os.utime(holder.path, (stale, stale))
    assert standby.try_acquire() and standby.took_from_stalled
    assert standby.still_held() and not holder.still_held()
    assert not WriterLease(tmp_path, stall_seconds=STALL).try_acquire(), "one holder at a time"
    holder.release()
    standby.release()


@pytest.fixture
def blocked_writer(
    store: KnowledgeStore, index_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[LiveIndex, threading.Event]]:
    """A writer whose worker blocks forever in its next batch (as on a FIFO), until released."""
    release = threading.Event()
    writer = live_index(store, index_dir)

    def blocking_sync(*args: Any, **kwargs: Any) -> Any:
        if threading.current_thread() is writer._thread:
            release.wait()
        return sync_sessions(*args, **kwargs)

    monkeypatch.setattr("engine.live.writing.sync_sessions", blocking_sync)
    assert writer.start(wait=10) and writer.is_writer
    yield writer, release
    release.set()
    writer.close()


def standby_of_a_blocked_batch(
    store: KnowledgeStore, index_dir: Path, test_id: str
) -> tuple[Path | None, LiveIndex]:
    """The generation before, and a standby (not started), once a step (clicking `test_id`)
    was recorded that the blocked writer's next batch takes."""
    first = IndexLayout(index_dir).current()
    store.record_step(step("mm-first1", test_id))
    return first, live_index(store, index_dir)


def test_a_writer_blocked_forever_is_replaced_and_steps_down_when_it_wakes(
    blocked_writer: tuple[LiveIndex, threading.Event],
    store: KnowledgeStore,
    index_dir: Path,
    engine: KnowledgeEngine,
) -> None:
    stuck, release = blocked_writer
    first, standby = standby_of_a_blocked_batch(store, index_dir, "blocks-the-writer")
    try:
        assert standby.start(wait=10)
        wait_for(lambda: standby.is_writer)
        assert standby.stats.rebuilds == 1
        assert "stopped making progress" in (standby.stats.lastRebuildReason or "")
        assert IndexLayout(index_dir).current() != first, "a new generation"
        new_session(store, "mm-after1", "send")
        store.record_step(step("mm-after1", "indexed-by-the-new-writer"))
        wait_for(lambda: "mm-after1/0001-mm_click" in hits(engine, "indexed by the new writer"))
        assert "mm-first1/0002-mm_click" in hits(engine, "blocks the writer")
        release.set()
        wait_for(lambda: stuck.stats.leaseLost == 1 and not stuck.is_writer)
        assert standby.is_writer and writer_pid(index_dir) == os.getpid()
    finally:
        standby.close()


@pytest.mark.slow
def test_a_sigstopped_writer_is_replaced(
    store: KnowledgeStore, index_dir: Path, engine: KnowledgeEngine
) -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", WRITER_SCRIPT, str(store.root), str(index_dir), str(STALL)],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
    )
    standby = live_index(store, index_dir)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "writer"
        assert standby.start(wait=10) and not standby.is_writer
        os.kill(child.pid, signal.SIGSTOP)
        store.record_step(step("mm-first1", "while-the-writer-is-stopped"))
        wait_for(lambda: standby.is_writer)
        assert writer_pid(index_dir) == os.getpid()
        wait_for(lambda: "mm-first1/0002-mm_click" in hits(engine, "while the writer is stopped"))
        os.kill(child.pid, signal.SIGCONT)  # it wakes up, finds the lease gone, reads only
        store.record_step(step("mm-first1", "after-it-woke-up"))
        wait_for(lambda: "mm-first1/0003-mm_click" in hits(engine, "after it woke up"))
        assert standby.is_writer and writer_pid(index_dir) == os.getpid()
    finally:
        standby.close()
        os.kill(child.pid, signal.SIGCONT)
        child.kill()
        child.wait()
        if child.stdout is not None:
            child.stdout.close()


def test_a_standby_that_took_over_a_busy_writer_keeps_its_intact_generation(
    blocked_writer: tuple[LiveIndex, threading.Event],
    store: KnowledgeStore,
    index_dir: Path,
    engine: KnowledgeEngine,
) -> None:
    """The holder was busy, not stopped: once it wakes it steps down and lets go of the
    generation, and the standby writes that generation, rebuilding nothing."""
    busy, release = blocked_writer
    first, standby = standby_of_a_blocked_batch(store, index_dir, "keeps-the-writer-busy")
    try:
        assert standby.start(wait=10)
        wait_for(lambda: standby._lease.held)
        release.set()  # it finishes its batch, finds the lease gone, steps down
        wait_for(lambda: standby.is_writer)
        assert busy.stats.leaseLost == 1
        assert standby.stats.rebuilds == 0
        assert IndexLayout(index_dir).current() == first, "the same generation"
        store.record_step(step("mm-first1", "indexed-by-the-standby"))
        wait_for(lambda: "mm-first1/0003-mm_click" in hits(engine, "indexed by the standby"))
        assert "mm-first1/0002-mm_click" in hits(engine, "keeps the writer busy")
    finally:
        standby.close()


def test_a_writer_beats_while_it_embeds_one_large_session(
    store: KnowledgeStore, index_dir: Path
) -> None:
    """A large session is one batch: the lease is renewed while its texts are embedded, not
    only once the session is done (a standby took the lease from such a writer)."""
    for number in range(200):
        store.record_step(step("mm-first1", f"button-number-{number}"))
    layout = IndexLayout(index_dir)
    live = live_index(store, index_dir)
    assert live.start(wait=30)
    live.close()
    beats: list[int] = []
    generation = layout.current()
    assert generation is not None
    writer = IndexWriter(generation)
    try:
        for number in range(200, 400):
            store.record_step(step("mm-first1", f"button-number-{number}"))
        sync_sessions(store, writer, ["mm-first1"], progress=lambda: beats.append(1))
    finally:
        writer.close()
    assert len(beats) > 2, "beats while embedding, not once per session"
