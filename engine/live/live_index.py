"""The live index: one writer per index directory, fed by the watcher, and its failover.

Many server processes share one knowledge root and one index. Tantivy allows one writer per
index, so writing is a lease: an exclusive `flock` on `<index>/writer.lock`, which the OS
releases when its holder exits or dies. The holder opens the IndexWriter, reconciles the index
with the files, watches the root and commits batches; every other process serves read-only
(`KnowledgeEngine.refresh()` before each query sees the holder's commits) and tries to take the
lease every `retry_seconds`, so a dead writer is replaced within a few seconds. A writer that
stops making progress (stopped, or blocked forever) stops beating and is replaced after
`stall_seconds` (`engine.live.lease`); the new writer builds a new generation, since the stalled one
still holds Tantivy's lock on the live one, and the old writer steps down if it ever wakes.

One worker thread does all the writing (an IndexWriter must not be shared between threads):
watcher callbacks only enqueue session ids; the worker waits for the first one, collects for
`debounce_seconds`, brings those sessions up to date and commits once. A session that only
gained step files (the common case: an agent recording) gets just the new documents, built from
its cached context; any other change re-indexes it whole. A failed batch is counted and its work
redone by a fresh writer and a full reconcile; the loop lives.

A damaged generation heals: the writer verifies the generation when it takes over, re-reads new
or changed segment files every `VERIFY_SECONDS`, and verifies in full when any process reported
damage (`engine.index.integrity`). A damaged, missing or other-schema generation is rebuilt from
the files into a new generation, which readers switch to; meanwhile status says "rebuilding".
"""

import logging
import os
import queue
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import orjson

from engine.core import IndexDamaged, IndexUnavailable, KnowhowError, StaleIndex
from engine.index import (
    META_FILE,
    SCHEMA_VERSION,
    AppendCache,
    FactsLedger,
    GenerationCheck,
    IndexLayout,
    IndexWriter,
    SyncReport,
    clear_damage,
    embedded_by_other_model,
    rebuild,
    report_damage,
    reported_damage,
    sync_sessions,
    write_detected,
)
from engine.live.lease import STALL_SECONDS, WriterLease, writer_pid
from engine.live.status import (
    MAX_LISTED,
    IndexStatus,
    LagMeter,
    SessionListings,
    SkipLedger,
    read_skips,
)
from engine.live.watcher import RootWatcher
from engine.records import (
    KnowledgeStore,
    SessionFacts,
    now_iso,
)

log = logging.getLogger(__name__)

DEBOUNCE_SECONDS = 0.1
RETRY_SECONDS = 1.0
MAX_RETRY_SECONDS = 30.0
RECONCILE_SECONDS = 60.0
UNWATCHED_RECONCILE_SECONDS = 2.0
IDLE_CHECK_SECONDS = 0.5
VERIFY_SECONDS = 5.0
"""How often the writer re-checks its generation's segment files (a few stats; files found
whole before are not read again)."""
SUPERSEDE_MIN_INTERVAL_SECONDS = 1.0
SUPERSEDE_SHARE = 0.1
"""Supersede planning judges again the testIds a batch touched (milliseconds; building a
screen's index the first time after a takeover costs more): it runs at most every 1 s, and
never more than a tenth of the writer's time."""


# -- the live index ------------------------------------------------------------------------
@dataclass
class LiveStats:
    batches: int = 0
    failedBatches: int = 0
    errors: int = 0
    sessionsIndexed: int = 0
    sessionsAppended: int = 0
    takeovers: int = 0
    lastBatchMs: float = 0.0
    maxBatchMs: float = 0.0
    lastSupersedeMs: float = 0.0
    sessionsFlagged: int = 0
    lastCommitAt: str | None = None
    lastError: str | None = None
    watching: bool = False
    rebuilds: int = 0
    leaseLost: int = 0
    lastRebuildReason: str | None = None
    lastRebuildSeconds: float = 0.0


class LiveIndex:
    """Keeps one index equal to the files of one root, writing only while holding the lease."""

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
        self.debounce_seconds = debounce_seconds
        self.retry_seconds = retry_seconds
        self.reconcile_seconds = reconcile_seconds
        self.watch = watch
        self.stats = LiveStats()
        self._lease = WriterLease(index_dir, stall_seconds=stall_seconds)
        self._events: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._writer: IndexWriter | None = None
        self._cache = AppendCache()
        self._ledger = FactsLedger({})
        self._next_supersede = 0.0
        self._watcher: RootWatcher | None = None
        self._skips = SkipLedger(store.root)
        self._listings = SessionListings(store)
        self._lag = LagMeter(store, self._listings)
        self._thread: threading.Thread | None = None
        self._failures_in_row = 0
        self._check: GenerationCheck | None = None
        self._next_verify = 0.0
        self.rebuilding: str | None = None
        """Why the index is being rebuilt right now (None when it is not)."""

    # -- public ----------------------------------------------------------------------------
    @property
    def is_writer(self) -> bool:
        return self._writer is not None

    def start(self, wait: float = 10.0) -> bool:
        """Start the worker; wait until an index exists (built or reconciled by us, or by the
        writer elsewhere). Returns False if it does not within `wait` seconds."""
        self._thread = threading.Thread(target=self._run, name="knowhow-live", daemon=True)
        self._thread.start()
        return self._ready.wait(wait)

    def close(self, timeout: float = 10.0) -> None:
        """Index what is queued, release the writer and the lease."""
        self._stop.set()
        self._events.put(None)
        if self._thread is not None:
            self._thread.join(timeout)

    def notify(self, session_id: str) -> None:
        """Mark a session changed (the watcher calls this; so may a recorder in this process)."""
        self._events.put(session_id)

    def status(
        self, documents_now: Callable[[], dict[str, int]], current_session: str | None = None
    ) -> "IndexStatus":
        """What an agent needs to trust (or distrust) search results right now
        (`documents_now` counts the documents of the live generation, as the engine sees it)."""
        generation = self.layout.current()
        skipped = [e for entries in read_skips(generation).values() for e in entries]
        documents, error = None, None
        try:
            documents = documents_now()
        except KnowhowError as exc:
            error = exc.message
        health, reason = self._health(generation, error)
        return IndexStatus(
            health=health,
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
            currentSession=current_session,
            error=error,
        )

    def _health(self, generation: Path | None, error: str | None) -> tuple[str, str | None]:
        """ "ok"; "rebuilding" (damaged, missing or stale, a writer is rebuilding it from the
        files); "damaged" (no live writer to rebuild it yet); or "unavailable" (it cannot be
        read right now). With the reason, for every state but "ok"."""
        if self.rebuilding is not None:
            return "rebuilding", self.rebuilding
        damage = reported_damage(generation) if generation is not None else None
        if damage is not None:
            if writer_pid(self.layout.base) is None:
                return "damaged", damage
            return "rebuilding", damage
        if error is not None:
            return "unavailable", error
        return "ok", None

    # -- the worker ------------------------------------------------------------------------
    def _run(self) -> None:
        next_attempt = 0.0
        next_reconcile = 0.0
        try:
            while not self._stop.is_set():
                self._keep_lease()
                if self._writer is None:
                    if time.monotonic() >= next_attempt:
                        if self._take_over():
                            next_reconcile = time.monotonic() + self._reconcile_interval()
                        else:
                            next_attempt = time.monotonic() + self._backoff()
                    if self._writer is None:
                        if self.layout.current() is not None:
                            self._ready.set()
                        self._stop.wait(max(0.0, next_attempt - time.monotonic()))
                        continue
                try:
                    next_reconcile = self._work(next_reconcile)
                except Exception as exc:  # never let the worker die: step down, retry later
                    self._failed("the live index worker", exc)
                    self._step_down(release_lease=False)
                if self._writer is None and self._failures_in_row:
                    next_attempt = time.monotonic() + self._backoff()
        finally:
            self._step_down(release_lease=True)

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

    def _work(self, next_reconcile: float) -> float:
        """One batch (if any) and a due reconcile; returns when the next reconcile is due."""
        batch = self._collect(IDLE_CHECK_SECONDS)
        if batch:
            self._apply(batch)
        self._supersede()
        if self._writer is not None and self.layout.current() != self._writer.path:
            log.info("index generation changed; reopening the writer")
            self._step_down(release_lease=False)
        elif self._writer is not None and self._damaged(self._writer.path):
            self._step_down(release_lease=False)  # the next takeover rebuilds it
        elif self._writer is not None and time.monotonic() >= next_reconcile:
            self._reconcile()
            next_reconcile = time.monotonic() + self._reconcile_interval()
        return next_reconcile

    def _damaged(self, generation: Path) -> bool:
        """Whether the writer's generation is damaged: reported by any process, or found by
        the periodic check of new and changed segment files. Damage is reported to all."""
        reported = reported_damage(generation)
        if reported is None and time.monotonic() < self._next_verify:
            return False
        self._next_verify = time.monotonic() + VERIFY_SECONDS
        if self._check is None or self._check.path != generation:
            self._check = GenerationCheck(generation)
        try:
            self._check.verify(full=reported is not None)
        except IndexDamaged as exc:
            log.warning("live index: %s", exc.message)
            report_damage(generation, exc.reason)
            return True
        if reported is not None:
            log.info("a reported damage of %s was not confirmed: %s", generation, reported)
            clear_damage(generation)
        return False

    def _backoff(self) -> float:
        """Seconds before the next takeover: doubles with each failure in a row (a full disk
        is not hammered), capped so a freed disk is used again soon."""
        return min(self.retry_seconds * 2.0 ** min(self._failures_in_row, 10), MAX_RETRY_SECONDS)

    def _collect(self, timeout: float) -> set[str]:
        """The sessions changed in one debounce window (empty after `timeout` of quiet)."""
        try:
            first = self._events.get(timeout=timeout)
        except queue.Empty:
            return set()
        batch = {first}
        deadline = time.monotonic() + self.debounce_seconds
        while first is not None and (left := deadline - time.monotonic()) > 0:
            try:
                batch.add(self._events.get(timeout=left))
            except queue.Empty:
                break
        return {s for s in batch if s is not None}

    def _take_over(self) -> bool:
        if not self._lease.held and not self._lease.try_acquire():
            return False
        try:
            self._writer = self._open_writer()
        except Exception as exc:  # a CLI `knowhow index` holds it, or a transient I/O error
            self._failed("opening the index writer", exc)
            return False
        self._skips.load(self._writer.path)
        pending = self._ledger.take_pending()  # not judged yet: the new ledger will
        self._ledger = FactsLedger.load(self._writer.manifest)
        self._ledger.add_pending(pending)
        self._start_watcher()
        self._reconcile()
        if self._writer is None:  # the first batch failed and stepped down: retry later
            return False
        self._failures_in_row = 0
        self.stats.takeovers += 1
        log.info("this process (pid %d) now writes the index %s", os.getpid(), self._writer.path)
        self._ready.set()
        return True

    def _open_writer(self) -> IndexWriter:
        """The writer of the live generation, verified whole first; builds a new generation
        when there is none, or the live one is damaged or built by another schema version."""
        current = self.layout.current()
        reason = "there is no index yet"
        if current is not None and self._lease.took_from_stalled:
            # the stalled holder still holds Tantivy's writer lock on this generation
            reason = "the previous writer stopped making progress"
        elif current is not None:
            self._check = GenerationCheck(current)
            self._next_verify = time.monotonic() + VERIFY_SECONDS
            try:
                self._check.verify(full=True)
                clear_damage(current)
                return IndexWriter(current)
            except IndexDamaged as exc:
                report_damage(current, exc.reason)
                reason = exc.reason
            except StaleIndex as exc:
                if not built_by_other_version(current):
                    raise  # unreadable right now: retry later, never rebuild over a hiccup
                reason = exc.message
        report = self._rebuild(reason)
        current = self.layout.current()
        if current is None:
            raise IndexUnavailable(f"rebuilding the index at {self.layout.base} failed")
        self._check = GenerationCheck(current)
        self._skips.by_session = {}
        self._skips.update(self.store.session_ids(), report)
        self._skips.save(current)
        return IndexWriter(current)

    def _rebuild(self, reason: str) -> SyncReport:
        """A new generation from the files (readers keep the old one until it is published)."""
        log.warning("live index: rebuilding the index from the files: %s", reason)
        self.rebuilding = reason
        started = time.perf_counter()
        try:
            report = rebuild(self.store, self.layout.base, lambda _done, _total: self._lease.beat())
        finally:
            self.rebuilding = None
        self._lease.took_from_stalled = False
        self.stats.rebuilds += 1
        self.stats.lastRebuildReason = reason
        self.stats.lastRebuildSeconds = round(time.perf_counter() - started, 3)
        return report

    def _start_watcher(self) -> None:
        if not self.watch:
            return
        watcher = RootWatcher(self.store.root, self.notify)
        try:
            watcher.start()
        except OSError as exc:  # e.g. out of inotify watches: fall back to frequent reconciles
            self._failed("watching the knowledge root", exc)
            return
        self._watcher = watcher
        self.stats.watching = True

    def _reconcile_interval(self) -> float:
        if self._watcher is None:
            return min(self.reconcile_seconds, UNWATCHED_RECONCILE_SECONDS)
        return self.reconcile_seconds

    def _reconcile(self) -> None:
        """Index whatever changed while nobody was watching (start, takeover, safety net)."""
        if self._writer is None:
            return
        try:
            changed = self._listings.differing(self._writer.manifest.signatures(), fresh=True)
        except Exception as exc:
            self._failed("comparing the index with the files", exc)
            return
        if changed:
            self._apply(set(changed))

    def _apply(self, session_ids: set[str]) -> None:
        writer = self._writer
        if writer is None:
            return
        try:
            report = sync_sessions(
                self.store, writer, session_ids, self._cache, progress=self._lease.beat
            )
            if self._skips.update(session_ids - report.appended, report):
                self._skips.save(writer.path)
            self._note_facts(report.facts)
        except Exception as exc:  # counted; a fresh writer and a full reconcile redo the work
            self._failed(f"indexing {len(session_ids)} session(s)", exc, batch=True)
            self._step_down(release_lease=False)
            return
        self._failures_in_row = 0
        self.stats.batches += 1
        self.stats.sessionsIndexed += report.sessions_indexed + report.sessions_deleted
        self.stats.sessionsAppended += len(report.appended)
        self.stats.lastCommitAt = now_iso()
        self.stats.lastBatchMs = round(report.seconds * 1000, 1)
        self.stats.maxBatchMs = max(self.stats.maxBatchMs, self.stats.lastBatchMs)
        log.debug(
            "indexed %d session(s), %d by appending, in %.1f ms",
            report.sessions_indexed + report.sessions_deleted,
            len(report.appended),
            report.seconds * 1000,
        )

    def _note_facts(self, touched: dict[str, SessionFacts | None]) -> None:
        """Keep the ledger current (it remembers which testIds the batch may have changed)."""
        for session_id, facts in touched.items():
            self._ledger.update(session_id, facts)

    def _supersede(self) -> None:
        """Judge again the testIds the batches since the last time touched (when due, see
        SUPERSEDE_SHARE); sessions whose decision files changed are queued, to be re-indexed
        with their flags."""
        if not self._ledger.pending or time.monotonic() < self._next_supersede:
            return
        started = time.perf_counter()
        scope = self._ledger.take_pending()
        try:
            flagged = write_detected(self.store, self._ledger, scope)
        except Exception as exc:  # counted; retried with the next batch
            self._ledger.add_pending(scope)
            self._failed("planning supersessions", exc)
            return
        for session_id in flagged:
            self.notify(session_id)
        took = time.perf_counter() - started
        self._next_supersede = time.monotonic() + max(
            SUPERSEDE_MIN_INTERVAL_SECONDS, took / SUPERSEDE_SHARE
        )
        self.stats.sessionsFlagged += len(flagged)
        self.stats.lastSupersedeMs = round(took * 1000, 1)

    def _failed(self, what: str, exc: Exception, *, batch: bool = False) -> None:
        self._failures_in_row += 1
        if batch:
            self.stats.failedBatches += 1
        else:
            self.stats.errors += 1
        self.stats.lastError = f"{what}: {type(exc).__name__}: {exc}"
        log.warning("live index: %s failed: %s", what, exc)

    def _step_down(self, *, release_lease: bool) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None
            self.stats.watching = False
        self._cache.clear()
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception as exc:
                log.warning("closing the index writer failed: %s", exc)
            self._writer = None
        if release_lease:
            self._lease.release()


def built_by_other_version(generation: Path) -> bool:
    """Whether a generation's meta file says (or, missing, implies) another schema version, or
    its vectors are of another model (`embedded_by_other_model`).

    Only then is rebuilding right; a meta file we merely fail to read now is left alone.
    """
    try:
        meta = orjson.loads((generation / META_FILE).read_bytes())
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    if not isinstance(meta, dict) or meta.get("schemaVersion") != SCHEMA_VERSION:
        return True
    return embedded_by_other_model(generation) is not None
