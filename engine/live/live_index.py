"""The live index: one writer per index directory, fed by the watcher, and its failover.

Many server processes share one knowledge root and one index. Tantivy allows one writer per
index, so writing is a lease (`engine.live.lease`): an exclusive `flock` on
`<index>/writer.lock`, which the OS releases when its holder exits or dies. The holder opens the
IndexWriter, reconciles the index with the files, watches the root and commits batches; every
other process serves read-only (`KnowledgeEngine.refresh()` before each query sees the holder's
commits) and tries to take the lease every `retry_seconds`, so a dead writer is replaced within
a few seconds. A writer that stops making progress (stopped, or blocked forever) stops beating
and is replaced after `stall_seconds`; the new writer builds a new generation, since the stalled
one still holds Tantivy's lock on the live one, and the old writer steps down if it ever wakes.

One worker thread does all the writing (an IndexWriter must not be shared between threads), in
four parts, each its own class: `LiveIndex` keeps the lease and runs the loop; `SessionChanges`
(`engine.live.changes`) queues the sessions the watcher reports and hands them over a debounce
window at a time; `LiveWriter` (`engine.live.writing`) opens, rebuilds, reconciles and commits;
`GenerationHealth` (`engine.live.health`) checks the generation it writes and says what status
reports. A failure is counted (`engine.live.stats`) and the loop lives: a turn of the loop that
fails, however it fails, is counted, the writer steps down and the next turn waits (doubling
with each failure in a row); meanwhile status says "stalled". (A failure outside any step once
ended the thread for good, while status went on saying "ok".)
"""

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path

from engine.core import KnowhowError
from engine.index import (
    SCHEMA_VERSION,
    WARNING,
    IndexLayout,
    folder_read_only,
    is_panic,
    read_skips,
)
from engine.live.changes import SessionChanges
from engine.live.health import health
from engine.live.lease import STALL_SECONDS, WriterLease, writer_pid
from engine.live.stats import Failures, LiveStats
from engine.live.status import MAX_LISTED, IndexStatus, LagMeter, SessionListings
from engine.live.writing import LiveWriter
from engine.records import KnowledgeStore

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.1
RETRY_SECONDS = 1.0
RECONCILE_SECONDS = 60.0
UNWATCHED_RECONCILE_SECONDS = 2.0
"""Without a watcher (switched off, or out of inotify watches) reconciles find the changes."""
IDLE_CHECK_SECONDS = 0.5


class LiveIndex:
    """Keeps one index equal to the files of one root, writing only while holding the lease:
    its worker thread keeps the lease (or tries to take it), and while it holds it hands each
    batch of changed sessions to the writer."""

    def __init__(
        self,
        store: KnowledgeStore,
        index_dir: Path,
        *,
        debounce_seconds: float = DEBOUNCE_SECONDS,
        retry_seconds: float = RETRY_SECONDS,
        reconcile_seconds: float = RECONCILE_SECONDS,
        stall_seconds: float = STALL_SECONDS,
        watch: bool = True,
    ) -> None:
        self.store = store
        self.layout = IndexLayout(index_dir)
        self.reconcile_seconds = reconcile_seconds
        self.stats = LiveStats()
        self._failures = Failures(self.stats, retry_seconds)
        self._lease = WriterLease(index_dir, stall_seconds=stall_seconds)
        self._changes = SessionChanges(
            store.root, self._failures, debounce_seconds=debounce_seconds, watch=watch
        )
        listings = SessionListings(store)
        self._lag = LagMeter(store, listings)
        self._writing = LiveWriter(store, self.layout, self._lease, self._failures, listings)
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._thread: threading.Thread | None = None
        self._next_attempt = 0.0
        self._next_reconcile = 0.0
        self.read_only = False
        """This process cannot write the index folder (a read-only mount): it serves the index
        as it is and never tries to take the writer lease (checked again every retry)."""

    # -- public ----------------------------------------------------------------------------
    @property
    def is_writer(self) -> bool:
        return self._writing.generation is not None

    def start(self, wait: float = 10.0) -> bool:
        """Start the worker; wait until an index exists (built or reconciled by us, or by the
        writer elsewhere). Returns False if it does not within `wait` seconds."""
        self._thread = threading.Thread(target=self._run, name="knowhow-live", daemon=True)
        self._thread.start()
        return self._ready.wait(wait)

    def close(self, timeout: float = 10.0) -> None:
        """Index what is queued, release the writer and the lease."""
        self._stop.set()
        self._changes.wake()
        if self._thread is not None:
            self._thread.join(timeout)

    def notify(self, session_id: str) -> None:
        """Mark a session changed (the watcher calls this; so may a recorder in this process)."""
        self._changes.notify(session_id)

    def status(
        self, documents_now: Callable[[], dict[str, int]], current_session: str | None = None
    ) -> "IndexStatus":
        """What an agent needs to trust (or distrust) search results right now
        (`documents_now` counts the documents of the live generation, as the engine sees it)."""
        documents, error, generation = None, None, None
        try:
            generation = self.layout.current()
            documents = documents_now()
        except KnowhowError as exc:
            error = exc.message
        entries = [e for listed in read_skips(generation).values() for e in listed]
        skipped = [e for e in entries if e.get("kind") != WARNING]
        warned = [e for e in entries if e.get("kind") == WARNING]
        warnings = [{"path": e["path"], "reason": e["reason"]} for e in warned]
        state, reason = health(
            self.layout.base,
            generation,
            error,
            self._writing.rebuilding,
            None if self.read_only else self._failing(),
            read_only=self.read_only,
        )
        return IndexStatus(
            health=state,
            healthReason=reason,
            schemaVersion=SCHEMA_VERSION,
            root=str(self.store.root),
            index=str(self.layout.base),
            generation=generation.name if generation else None,
            documents=documents,
            sessionsOnDisk=len(self.store.session_ids()),
            pid=os.getpid(),
            isWriter=self.is_writer,
            writerPid=writer_pid(self.layout.base),
            live=asdict(self.stats),
            indexLag=self._lag.measure(generation),
            skippedCount=len(skipped),
            skipped=skipped[:MAX_LISTED],
            warningCount=len(warnings),
            warnings=warnings[:MAX_LISTED],
            currentSession=current_session,
            error=error,
        )

    def _failing(self) -> str | None:
        """Why live indexing in this process is not working now (None: it is)."""
        writer = writer_pid(self.layout.base)
        return self._failures.failing(writer_elsewhere=writer not in (None, os.getpid()))

    # -- the worker ------------------------------------------------------------------------
    def _run(self) -> None:
        """Turn after turn until closed; a failed turn is counted and waited out, never the
        end of the thread (a Rust panic is a BaseException: caught too)."""
        try:
            while not self._stop.is_set():
                try:
                    self._turn()
                except BaseException as exc:
                    if not (isinstance(exc, Exception) or is_panic(exc)):
                        raise
                    wait = self._failures.crashed(exc)
                    self._step_down_after(exc)
                    self._next_attempt = time.monotonic() + wait
                    self._stop.wait(wait)
                else:
                    self._failures.turned()
        finally:
            self._step_down(release_lease=True)

    def _turn(self) -> None:
        """Keep (or take) the lease; as the writer, one batch and whatever is due."""
        self._keep_lease()
        if not self.is_writer:
            if time.monotonic() >= self._next_attempt:
                self.read_only = folder_read_only(self.layout.base)
                if not self.read_only and self._take_over():
                    self._next_reconcile = time.monotonic() + self._reconcile_interval()
                    return
                self._next_attempt = time.monotonic() + self._failures.backoff()
            if self.layout.current() is not None:
                self._ready.set()
            self._stop.wait(max(0.0, self._next_attempt - time.monotonic()))
            return
        self._next_reconcile = self._work(self._next_reconcile)
        if not self.is_writer:
            self._step_down(release_lease=False)  # a failed batch closed the writer
            if self._failures.in_row:
                self._next_attempt = time.monotonic() + self._failures.backoff()

    def _step_down_after(self, exc: BaseException) -> None:
        """Step down after a failed turn (which may have failed stepping down itself)."""
        try:
            self._step_down(release_lease=False)
        except Exception as again:
            log.warning("live index: stepping down after %r failed too: %s", exc, again)

    def _keep_lease(self) -> None:
        """Beat while writing; step down when a standby took the lease because this process
        stopped making progress (stopped, or blocked) for `stall_seconds`."""
        if not self._lease.held:
            return
        if self._lease.still_held():
            self._lease.beat()
            return
        log.warning("live index: another process took over the writer lease (this one stalled)")
        self.stats.leaseLost += 1
        self._step_down(release_lease=True)

    def _take_over(self) -> bool:
        if not self._lease.held and not self._lease.try_acquire():
            return False
        if not self._writing.open():
            return False
        self._changes.start_watching()
        self._writing.reconcile()
        if not self.is_writer:  # the first batch failed and closed the writer: retry later
            self._step_down(release_lease=False)
            return False
        self._failures.succeeded()
        self.stats.takeovers += 1
        log.info(
            "this process (pid %d) now writes the index %s", os.getpid(), self._writing.generation
        )
        self._ready.set()
        return True

    def _work(self, next_reconcile: float) -> float:
        """One batch (if any) and a due reconcile; returns when the next reconcile is due."""
        batch = self._changes.collect(IDLE_CHECK_SECONDS)
        if batch:
            self._writing.apply(batch)
        for session_id in self._writing.supersede():
            self._changes.notify(session_id)
        generation = self._writing.generation
        if generation is not None and self.layout.current() != generation:
            log.info("index generation changed; reopening the writer")
            self._step_down(release_lease=False)
        elif generation is not None and self._writing.health.damaged(generation):
            self._step_down(release_lease=False)  # the next takeover rebuilds it
        elif generation is not None and time.monotonic() >= next_reconcile:
            self._writing.reconcile()
            self.layout.sweep()  # generations replaced earlier, once their last reader left
            next_reconcile = time.monotonic() + self._reconcile_interval()
        return next_reconcile

    def _reconcile_interval(self) -> float:
        if not self._changes.watched:
            return min(self.reconcile_seconds, UNWATCHED_RECONCILE_SECONDS)
        return self.reconcile_seconds

    def _step_down(self, *, release_lease: bool) -> None:
        self._changes.stop_watching()
        self._writing.close()
        if release_lease:
            self._lease.release()
