"""The writing half of the live index: the IndexWriter of the live generation, kept equal to
the files while this process holds the lease.

Opening verifies the live generation first; a damaged, missing or other-schema generation (or
one a stalled writer still holds Tantivy's lock on) is rebuilt from the files into a new
generation, which readers switch to; meanwhile status says "rebuilding". Then each batch of
changed sessions is one commit: a session that only gained step files (the common case: an
agent recording) gets just the new documents, built from its cached context; any other change
re-indexes it whole. A reconcile indexes whatever changed while nobody was watching. A failed
batch is counted and closes the writer: a fresh writer and a full reconcile redo its work.
"""

import logging
import time
from collections.abc import Iterable
from pathlib import Path

import orjson

from engine.core import IndexDamaged, IndexUnavailable, StaleIndex
from engine.index import (
    META_FILE,
    SCHEMA_VERSION,
    AppendCache,
    FactsLedger,
    IndexLayout,
    IndexWriter,
    SkipLedger,
    SyncReport,
    embedded_by_other_model,
    load_renames,
    other_root,
    rebuild,
    sync_sessions,
    write_detected,
    write_renames,
)
from engine.live.health import GenerationHealth, report_damage_to_readers
from engine.live.lease import WriterLease
from engine.live.stats import Failures
from engine.live.status import SessionListings
from engine.records import KnowledgeStore, Rename, SessionFacts, now_iso

log = logging.getLogger(__name__)

SUPERSEDE_MIN_INTERVAL_SECONDS = 1.0
SUPERSEDE_SHARE = 0.1
"""Supersede planning judges again the testIds a batch touched (quick; building a
screen's index the first time after a takeover costs more): it runs at most every 1 s, and
never more than a tenth of the writer's time."""


class LiveWriter:
    """The IndexWriter of the live generation, and what it keeps from batch to batch: the
    sessions' cached contexts, the facts the supersede planner judges, the files skipped."""

    def __init__(
        self,
        store: KnowledgeStore,
        layout: IndexLayout,
        lease: WriterLease,
        failures: Failures,
        listings: SessionListings,
    ) -> None:
        self.store = store
        self.layout = layout
        self.health = GenerationHealth()
        self.rebuilding: str | None = None
        """Why the index is being rebuilt right now (None when it is not)."""
        self._lease = lease
        self._failures = failures
        self._stats = failures.stats
        self._listings = listings
        self._writer: IndexWriter | None = None
        self._cache = AppendCache()
        self._ledger = FactsLedger({})
        self._renames: dict[str, list[Rename]] | None = None
        """screen -> its renames as last written to the generation (None: not read yet)."""
        self._next_supersede = 0.0
        self._skips = SkipLedger(store.root)

    @property
    def generation(self) -> Path | None:
        """The generation being written (None while closed)."""
        return self._writer.path if self._writer is not None else None

    def open(self) -> bool:
        """Open the writer of the live generation, verified or rebuilt first; False (and a
        counted failure) when it cannot be opened now."""
        try:
            self._writer = self._open_writer()
        except Exception as exc:  # a CLI `knowhow index` holds it, or a transient I/O error
            self._failures.note("opening the index writer", exc)
            return False
        self._skips.load(self._writer.path)
        pending = self._ledger.take_pending()  # not judged yet: the new ledger will
        self._ledger = FactsLedger.load(self._writer.manifest)
        self._ledger.add_pending(pending)
        self._renames = None
        return True

    def close(self) -> None:
        self._cache.clear()
        if self._writer is not None:
            try:
                self._writer.close()
            except Exception as exc:
                log.warning("closing the index writer failed: %s", exc)
            self._writer = None

    def _open_writer(self) -> IndexWriter:
        """The writer of the live generation, verified whole first; builds a new generation
        when there is none, or the live one is damaged or built by another schema version."""
        live = self.layout.held_current()  # held: no rebuild elsewhere removes it meanwhile
        reason = "there is no index yet"
        if live is not None:
            generation, held = live
            try:
                if self._lease.took_from_stalled and self._lease.waited_out():
                    # the stalled holder still holds Tantivy's writer lock on this generation
                    reason = "the previous writer stopped making progress"
                elif (other := other_root(self.layout.base, self.store.root)) is not None:
                    reason = f"it held the index of another root, {other}"
                else:
                    self.health.verify(generation)
                    # after a takeover this fails (and is retried) until the holder it replaced,
                    # busy rather than stopped, notices and lets go of the intact generation
                    writer = IndexWriter(generation)
                    self._lease.took_from_stalled = False
                    return writer
            except IndexDamaged as exc:
                report_damage_to_readers(generation, exc)
                reason = exc.reason
            except StaleIndex as exc:
                if not built_by_other_version(generation):
                    raise  # unreadable right now: retry later, never rebuild over a hiccup
                reason = exc.message
            finally:
                held.release()  # a writer holds it itself; a rebuild must be free to remove it
        report = self._rebuild(reason)
        current = self.layout.current()
        if current is None:
            raise IndexUnavailable(f"rebuilding the index at {self.layout.base} failed")
        self.health.follow(current)
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
            report = rebuild(
                self.store,
                self.layout.base,
                lambda _done, _total: self._lease.beat(),
                waiting=lambda _pid: self._lease.beat(),  # another process rebuilds: wait
            )
        finally:
            self.rebuilding = None
        self._lease.took_from_stalled = False
        self._stats.rebuilds += 1
        self._stats.lastRebuildReason = reason
        self._stats.lastRebuildSeconds = round(time.perf_counter() - started, 3)
        return report

    def reconcile(self) -> None:
        """Index whatever changed while nobody was watching (start, takeover, safety net), and
        embed the texts an earlier writer could not (its model did not load)."""
        if self._writer is None:
            return
        try:
            changed = self._listings.differing(self._writer.manifest.signatures(), fresh=True)
            awaiting = self._writer.awaits_vectors()
        except Exception as exc:
            self._failures.note("comparing the index with the files", exc)
            return
        if changed or awaiting:
            self.apply(set(changed))

    def apply(self, session_ids: set[str]) -> None:
        """Bring these sessions up to date in one commit; a failure closes the writer."""
        writer = self._writer
        if writer is None:
            return
        try:
            report = sync_sessions(
                self.store,
                writer,
                session_ids,
                self._cache,
                progress=self._lease.beat,
                indexed_facts=self._ledger.facts,
            )
            if self._skips.update(session_ids - report.appended, report):
                self._skips.save(writer.path)
            self._note_facts(report.facts)
        except Exception as exc:  # counted; a fresh writer and a full reconcile redo the work
            self._failures.note(f"indexing {len(session_ids)} session(s)", exc, batch=True)
            self.close()
            return
        self._failures.succeeded()
        self._stats.batches += 1
        self._stats.sessionsIndexed += report.sessions_indexed + report.sessions_deleted
        self._stats.sessionsAppended += len(report.appended)
        self._stats.lastCommitAt = now_iso()
        self._stats.lastBatchMs = round(report.seconds * 1000, 1)
        self._stats.maxBatchMs = max(self._stats.maxBatchMs, self._stats.lastBatchMs)
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

    def supersede(self) -> list[str]:
        """Judge again the testIds the batches since the last time touched (when due, see
        SUPERSEDE_SHARE); returns the sessions whose decision files changed, to be re-indexed
        with their flags."""
        if not self._ledger.pending or time.monotonic() < self._next_supersede:
            return []
        started = time.perf_counter()
        scope = self._ledger.take_pending()
        try:
            flagged = write_detected(self.store, self._ledger, scope)
            self._write_renames(scope)
        except Exception as exc:  # counted; retried with the next batch
            self._ledger.add_pending(scope)
            self._failures.note("planning supersessions", exc)
            return []
        took = time.perf_counter() - started
        self._next_supersede = time.monotonic() + max(
            SUPERSEDE_MIN_INTERVAL_SECONDS, took / SUPERSEDE_SHARE
        )
        self._stats.sessionsFlagged += len(flagged)
        self._stats.lastSupersedeMs = round(took * 1000, 1)
        return list(flagged)

    def _write_renames(self, screens: Iterable[str]) -> None:
        """The generation's renames (`engine.index.renamed_ids`) with those of `screens`
        judged again; every screen's when the generation has no renames file yet."""
        generation = self.generation
        if generation is None:
            return
        if self._renames is None:
            known = load_renames(generation)
            if known is None:
                screens = list(self._ledger.by_screen)
            self._renames = {}
            for rename in known or []:
                self._renames.setdefault(rename.screen, []).append(rename)
        for screen in screens:
            self._renames[screen] = list(self._ledger.screen(screen).renames().values())
        write_renames(generation, [r for found in self._renames.values() for r in found])


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
