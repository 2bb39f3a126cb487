"""The live index: one writer per index directory, fed by the watcher, and its failover.

Many server processes share one knowledge root and one index. Tantivy allows one writer per
index, so writing is a lease: an exclusive `flock` on `<index>/writer.lock`, which the OS
releases when its holder exits or dies. The holder opens the IndexWriter, reconciles the index
with the files, watches the root and commits batches; every other process serves read-only
(`KnowledgeEngine.refresh()` before each query sees the holder's commits) and tries to take the
lease every `retry_seconds`, so a dead writer is replaced within a few seconds.

One worker thread does all the writing (an IndexWriter must not be shared between threads):
watcher callbacks only enqueue session ids; the worker waits for the first one, collects for
`debounce_seconds`, brings those sessions up to date and commits once. A session that only
gained step files (the common case: an agent recording) gets just the new documents, built from
its cached context; any other change re-indexes it whole. A failed batch is counted and its work
redone by a fresh writer and a full reconcile; the loop lives. Nothing here deletes or
quarantines an index: only a missing one, or one built by another schema version, is rebuilt.
"""

import contextlib
import fcntl
import hashlib
import logging
import os
import queue
import sqlite3
import threading
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import orjson
import tantivy
from pydantic import ValidationError

from engine.documents import SessionContext, session_documents, step_documents
from engine.errors import IndexUnavailable, KnowhowError, StaleIndex
from engine.files import atomic_write
from engine.index import MANIFEST_FILE, META_FILE, IndexLayout, IndexReader, IndexWriter
from engine.indexer import SyncReport, rebuild, session_signature
from engine.models import SessionMetadata, now_iso
from engine.results import Result
from engine.schema import DOC_SESSION, DOC_STEP, SCHEMA_VERSION
from engine.store import (
    SESSION_FILE,
    STEPS_DIR,
    FileSig,
    KnowledgeStore,
    LoadedSession,
    LoadedStep,
    Skip,
    step_id_for,
)
from engine.watcher import RootWatcher

log = logging.getLogger(__name__)

LEASE_FILE = "writer.lock"
SKIPS_FILE = "skipped.json"
DEBOUNCE_SECONDS = 0.1
RETRY_SECONDS = 1.0
RECONCILE_SECONDS = 60.0
UNWATCHED_RECONCILE_SECONDS = 2.0
IDLE_CHECK_SECONDS = 0.5
MAX_LISTED = 50
APPEND_CACHE_SESSIONS = 4096


# -- indexing sessions ---------------------------------------------------------------------
@dataclass
class IndexedSession:
    """What the writer indexed of a session: enough to add appended steps without reading or
    re-indexing the earlier ones (their file signatures, the session as the agent saw it after
    the last step, the number of step documents)."""

    meta_sig: FileSig
    files: dict[str, FileSig]
    context: SessionContext
    seq: int
    metadata: SessionMetadata


class AppendCache:
    """The writer's memory of recently indexed sessions (LRU), valid for one writer tenure."""

    def __init__(self, limit: int = APPEND_CACHE_SESSIONS) -> None:
        self.limit = limit
        self._sessions: OrderedDict[str, IndexedSession] = OrderedDict()

    def get(self, session_id: str) -> IndexedSession | None:
        known = self._sessions.get(session_id)
        if known is not None:
            self._sessions.move_to_end(session_id)
        return known

    def put(self, session_id: str, known: IndexedSession | None) -> None:
        self._sessions.pop(session_id, None)
        if known is not None:
            self._sessions[session_id] = known
            if len(self._sessions) > self.limit:
                self._sessions.popitem(last=False)

    def clear(self) -> None:
        self._sessions.clear()


@dataclass
class LiveReport(SyncReport):
    appended: set[str] = field(default_factory=set)
    """Sessions that only got new steps (their earlier skipped files still stand)."""


def sync_sessions(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_ids: Iterable[str],
    cache: AppendCache | None = None,
) -> LiveReport:
    """Bring these sessions up to date, then commit once: a session whose folder is gone is
    dropped; one that only gained step files gets just those (with a cache);
    any other is re-indexed whole."""
    started = time.perf_counter()
    report = LiveReport()
    for session_id in sorted(set(session_ids)):
        if not (store.root / session_id).is_dir():
            writer.delete_session(session_id)
            report.sessions_deleted += 1
            if cache is not None:
                cache.put(session_id, None)
        elif not (cache is not None and _append(store, writer, session_id, cache, report)):
            _reindex(store, writer, session_id, cache, report)
    writer.commit()
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True, slots=True)
class Listing:
    """A session's files by signature, read in one pass without opening them; `signature` is
    `engine.indexer.session_signature` of the same pass (a test pins the two equal)."""

    meta_sig: FileSig | None
    files: dict[str, FileSig]
    signature: str


def list_session(store: KnowledgeStore, session_id: str) -> Listing:
    base = store.root / session_id
    digest = hashlib.blake2b(digest_size=16)
    meta_sig = _file_sig(base / SESSION_FILE)
    if meta_sig is not None:
        digest.update(f"{SESSION_FILE}:{meta_sig.size}:{meta_sig.mtime_ns};".encode())
    files: dict[str, FileSig] = {}
    try:
        entries = sorted(os.scandir(base / STEPS_DIR), key=lambda e: e.name)
    except FileNotFoundError:
        entries = []
    for entry in entries:
        if not entry.name.endswith(".json"):
            continue
        try:
            st = entry.stat()
        except FileNotFoundError:
            continue
        digest.update(f"{entry.name}:{st.st_size}:{st.st_mtime_ns};".encode())
        if not entry.name.startswith(".") and entry.is_file():
            files[entry.name] = FileSig(st.st_mtime_ns, st.st_size)
    return Listing(meta_sig, files, digest.hexdigest())


def _file_sig(path: Path) -> FileSig | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return FileSig(st.st_mtime_ns, st.st_size)


def _reindex(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_id: str,
    cache: AppendCache | None,
    report: SyncReport,
) -> None:
    listing = list_session(store, session_id)  # taken before reading: never newer than content
    loaded = store.load_session(session_id)
    writer.replace_session(session_id, session_documents(loaded), listing.signature)
    report.skipped.extend(loaded.skipped)
    report.sessions_indexed += 1
    report.steps_indexed += len(loaded.steps)
    if cache is not None:
        cache.put(session_id, remember(loaded, listing.files))


def remember(loaded: LoadedSession, listing: dict[str, FileSig]) -> IndexedSession | None:
    """The cache entry for a session just indexed whole, or None when it cannot be appended to
    (no readable `session.json`, or a skipped file we have no signature of)."""
    if not loaded.has_metadata_file or loaded.meta_sig is None:
        return None
    files = {s.step_id.split("/", 1)[1] + ".json": s.sig for s in loaded.steps}
    for skip in loaded.skipped:
        name = Path(skip.path).name
        if name not in listing:
            return None
        files[name] = listing[name]
    context = SessionContext()
    for step in loaded.steps:
        context.advance(step.record)
    return IndexedSession(loaded.meta_sig, files, context, len(loaded.steps), loaded.metadata)


def tail_documents(
    known: IndexedSession, steps: list[LoadedStep]
) -> tuple[list[dict[str, Any]], SessionContext]:
    """Documents of steps appended after `known`, exactly as `session_documents` makes them."""
    context = replace(known.context)  # `advance` rebinds its maps, so the copy is independent
    return step_documents(steps, known.metadata, context, known.seq), context


def _append(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_id: str,
    cache: AppendCache,
    report: LiveReport,
) -> bool:
    """Index only the new step files of a session, if that is all that changed."""
    known = cache.get(session_id)
    if known is None:
        return False
    listing = list_session(store, session_id)
    files = listing.files
    if listing.meta_sig != known.meta_sig or any(files.get(n) != s for n, s in known.files.items()):
        return False
    new = sorted(set(files) - set(known.files))
    if new and known.files and new[0] <= max(known.files):
        return False  # a step inserted before indexed ones changes their context
    steps = []
    for name in new:
        try:
            record = store.read_step(store.root / session_id / STEPS_DIR / name)
        except (OSError, ValueError, ValidationError):
            return False  # the whole-session path reports unreadable files with their reason
        steps.append(LoadedStep(step_id_for(session_id, name), record, files[name]))
    docs, context = tail_documents(known, steps)
    writer.add_documents(session_id, docs, listing.signature)
    indexed = {**known.files, **{name: files[name] for name in new}}
    cache.put(session_id, replace(known, files=indexed, context=context, seq=known.seq + len(docs)))
    report.sessions_indexed += 1
    report.steps_indexed += len(docs)
    report.appended.add(session_id)
    return True


def changed_sessions(store: KnowledgeStore, signatures: dict[str, str]) -> list[str]:
    """Sessions whose files differ from what the index was built from: new, changed, deleted."""
    on_disk = store.session_ids()
    changed = [s for s in on_disk if signatures.get(s) != session_signature(store, s)]
    return changed + sorted(set(signatures) - set(on_disk))


def read_manifest(generation: Path | None) -> dict[str, str]:
    """The per-session signatures a generation was built from, read-only (any process)."""
    path = generation / MANIFEST_FILE if generation else None
    if path is None or not path.exists():
        return {}
    conn = sqlite3.connect(f"{path.as_uri()}?mode=ro", uri=True)
    try:
        return dict(conn.execute("SELECT session_id, signature FROM sessions").fetchall())
    except sqlite3.Error:
        return {}
    finally:
        conn.close()


# -- skipped files -------------------------------------------------------------------------
class SkipLedger:
    """Files the index could not read, by session, kept beside the generation so that every
    process (and the next writer) can report them, not only the one that met them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.by_session: dict[str, list[dict[str, str]]] = {}

    def load(self, generation: Path) -> None:
        self.by_session = read_skips(generation)

    def update(self, session_ids: Iterable[str], report: SyncReport) -> bool:
        """Replace the entries of re-indexed sessions; True when anything changed."""
        grouped: dict[str, list[dict[str, str]]] = defaultdict(list)
        for skip in report.skipped:
            session, entry = self._entry(skip)
            if session:
                grouped[session].append(entry)
        before = dict(self.by_session)
        for session_id in session_ids:
            if grouped.get(session_id):
                self.by_session[session_id] = grouped[session_id]
            else:
                self.by_session.pop(session_id, None)
        return before != self.by_session

    def save(self, generation: Path) -> None:
        atomic_write(generation / SKIPS_FILE, orjson.dumps(self.by_session))

    def _entry(self, skip: Skip) -> tuple[str | None, dict[str, str]]:
        try:
            relative = Path(skip.path).relative_to(self.root)
        except ValueError:
            return None, {}
        return relative.parts[0], {"path": relative.as_posix(), "reason": skip.reason}


def read_skips(generation: Path | None) -> dict[str, list[dict[str, str]]]:
    if generation is None:
        return {}
    try:
        data = orjson.loads((generation / SKIPS_FILE).read_bytes())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


# -- the writer lease ----------------------------------------------------------------------
class WriterLease:
    """An exclusive, non-blocking `flock` on `<index>/writer.lock` holding the holder's pid.

    flock belongs to the open file, so two LiveIndex objects in one process exclude each other
    as two processes do, and the kernel releases it when the holder dies (even by SIGKILL).
    """

    def __init__(self, base: Path) -> None:
        self.path = Path(base) / LEASE_FILE
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def try_acquire(self) -> bool:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            return False
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        return True

    def release(self) -> None:
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None


def writer_pid(base: Path) -> int | None:
    """The pid the last lease holder wrote, when that process is still alive."""
    try:
        pid = int((Path(base) / LEASE_FILE).read_text().strip() or 0)
    except (OSError, ValueError):
        return None
    if pid <= 0:
        return None
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:
        return pid
    return pid


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
    lastCommitAt: str | None = None
    lastError: str | None = None
    watching: bool = False


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
        watch: bool = True,
    ) -> None:
        self.store = store
        self.layout = IndexLayout(index_dir)
        self.debounce_seconds = debounce_seconds
        self.retry_seconds = retry_seconds
        self.reconcile_seconds = reconcile_seconds
        self.watch = watch
        self.stats = LiveStats()
        self._lease = WriterLease(index_dir)
        self._events: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._writer: IndexWriter | None = None
        self._cache = AppendCache()
        self._watcher: RootWatcher | None = None
        self._skips = SkipLedger(store.root)
        self._thread: threading.Thread | None = None

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
        self, reader: Callable[[], IndexReader], current_session: str | None = None
    ) -> "IndexStatus":
        """What an agent needs to trust (or distrust) search results right now."""
        generation = self.layout.current()
        skipped = [e for entries in read_skips(generation).values() for e in entries]
        documents, error = None, None
        try:
            documents = document_counts(reader())
        except KnowhowError as exc:
            error = exc.message
        return IndexStatus(
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
            indexLag=index_lag(self.store, generation),
            skippedCount=len(skipped),
            skipped=skipped[:MAX_LISTED],
            currentSession=current_session,
            error=error,
        )

    # -- the worker ------------------------------------------------------------------------
    def _run(self) -> None:
        next_attempt = 0.0
        next_reconcile = 0.0
        try:
            while not self._stop.is_set():
                if self._writer is None:
                    if time.monotonic() >= next_attempt:
                        next_attempt = time.monotonic() + self.retry_seconds
                        if self._take_over():
                            next_reconcile = time.monotonic() + self._reconcile_interval()
                    if self._writer is None:
                        if self.layout.current() is not None:
                            self._ready.set()
                        self._stop.wait(max(0.0, next_attempt - time.monotonic()))
                        continue
                batch = self._collect(IDLE_CHECK_SECONDS)
                if batch:
                    self._apply(batch)
                if self._writer is not None and self.layout.current() != self._writer.path:
                    log.info("index generation changed; reopening the writer")
                    self._step_down(release_lease=False)
                elif self._writer is not None and time.monotonic() >= next_reconcile:
                    self._reconcile()
                    next_reconcile = time.monotonic() + self._reconcile_interval()
        finally:
            self._step_down(release_lease=True)

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
        self._start_watcher()
        self._reconcile()
        self.stats.takeovers += 1
        log.info("this process (pid %d) now writes the index %s", os.getpid(), self._writer.path)
        self._ready.set()
        return True

    def _open_writer(self) -> IndexWriter:
        """The writer of the live generation; builds one when there is none or it is stale."""
        current = self.layout.current()
        if current is not None:
            try:
                return IndexWriter(current)
            except StaleIndex as exc:
                if not built_by_other_schema(current):
                    raise  # unreadable right now: retry later, never rebuild over a hiccup
                log.warning("%s; rebuilding", exc.message)
        report = rebuild(self.store, self.layout.base)
        current = self.layout.current()
        if current is None:
            raise IndexUnavailable(f"rebuilding the index at {self.layout.base} failed")
        self._skips.by_session = {}
        self._skips.update(self.store.session_ids(), report)
        self._skips.save(current)
        return IndexWriter(current)

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
            changed = changed_sessions(self.store, self._writer.manifest.signatures())
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
            report = sync_sessions(self.store, writer, session_ids, self._cache)
            if self._skips.update(session_ids - report.appended, report):
                self._skips.save(writer.path)
        except Exception as exc:  # counted; a fresh writer and a full reconcile redo the work
            self._failed(f"indexing {len(session_ids)} session(s)", exc, batch=True)
            self._step_down(release_lease=False)
            return
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

    def _failed(self, what: str, exc: Exception, *, batch: bool = False) -> None:
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


def built_by_other_schema(generation: Path) -> bool:
    """Whether a generation's meta file says (or, missing, implies) another schema version.

    Only then is rebuilding right; a meta file we merely fail to read now is left alone.
    """
    try:
        meta = orjson.loads((generation / META_FILE).read_bytes())
    except FileNotFoundError:
        return True
    except (OSError, ValueError):
        return False
    return not isinstance(meta, dict) or meta.get("schemaVersion") != SCHEMA_VERSION


# -- status --------------------------------------------------------------------------------
class IndexLag(Result):
    """How far the index is behind the files: sessions not yet (re)indexed, and how long the
    longest-waiting of them has waited (seconds since its newest file was written)."""

    pendingSessions: int
    seconds: float
    sessions: list[str]


class IndexStatus(Result):
    schemaVersion: int
    root: str
    index: str
    generation: str | None
    documents: dict[str, int] | None
    sessionsOnDisk: int
    pid: int
    isWriter: bool
    writerPid: int | None
    live: dict[str, Any]
    indexLag: IndexLag
    skippedCount: int
    skipped: list[dict[str, str]]
    currentSession: str | None = None
    error: str | None = None


def document_counts(reader: IndexReader) -> dict[str, int]:
    searcher = reader.searcher()

    def count(doc_type: str) -> int:
        query = tantivy.Query.term_query(reader.schema, "doc_type", doc_type, index_option="basic")
        found = searcher.search(query, limit=1, count=True)
        return int(found.count)  # type: ignore[attr-defined]  # missing from tantivy's stub

    return {"steps": count(DOC_STEP), "sessions": count(DOC_SESSION)}


def index_lag(store: KnowledgeStore, generation: Path | None) -> IndexLag:
    signatures = read_manifest(generation)
    pending = changed_sessions(store, signatures)
    now = time.time()
    waits = [now - newest_mtime(store, s) for s in pending]
    return IndexLag(
        pendingSessions=len(pending),
        seconds=round(max([w for w in waits if w < now], default=0.0), 3),
        sessions=pending[:MAX_LISTED],
    )


def newest_mtime(store: KnowledgeStore, session_id: str) -> float:
    """Modification time of a session's newest file (0 when it has none any more)."""
    base = store.root / session_id
    paths = [base / SESSION_FILE]
    with contextlib.suppress(FileNotFoundError):
        paths += [Path(e.path) for e in os.scandir(base / STEPS_DIR) if e.name.endswith(".json")]
    times = []
    for path in paths:
        try:
            times.append(path.stat().st_mtime)
        except FileNotFoundError:
            continue
    return max(times, default=0.0)
