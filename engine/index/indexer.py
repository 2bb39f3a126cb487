"""Keep the index equal to the files: full rebuild, and incremental sync by session.

A session is the unit of (re)indexing: its step documents carry its metadata and resolve
a11y refs from earlier steps, so when any of its files change the session is re-indexed whole
(20-80 steps, milliseconds). Unchanged sessions are recognised by a signature of their files'
names, sizes and modification times, without parsing them.
"""

import atexit
import base64
import gc
import multiprocessing
import os
import pickle
import tempfile
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, TypeVar

import orjson

from engine.core import IndexDamaged, StaleIndex
from engine.index.documents import (
    SessionContext,
    reflag_step_document,
    session_documents,
    step_documents,
)
from engine.index.generation_locks import BuildLock, remove_folder
from engine.index.generations import (
    EncodedDocuments,
    IndexLayout,
    IndexWriter,
    create_generation,
    encode_documents,
    other_root,
)
from engine.index.integrity import GenerationCheck
from engine.index.renamed_ids import load_renames, write_renames
from engine.index.skips import record_skips
from engine.index.supersede_decisions import FactsLedger, write_detected
from engine.index.worker_lifetime import end_with
from engine.records import KnowledgeStore, Planner, SessionFacts, Skip, Supersession, list_session

T = TypeVar("T")
ProgressFn = Callable[[int, int], None]
"""Called with (sessions done, sessions total)."""

COMMIT_EVERY_DOCS = 200_000
PARALLEL_MIN_SESSIONS = 64
PARALLEL_WORKERS = min(8, 2 * (os.cpu_count() or 1))
"""Workers reading and analysing sessions. Twice the cores: on a cold page cache each worker
waits on the disk much of the time (`scripts/bench_build.py`, cold and warm cache)."""
CHUNK_SESSIONS = 16
"""Sessions a worker reads and analyses per task (one round trip for ~800 steps)."""
CHUNKS_AHEAD = 2 * PARALLEL_WORKERS
"""Tasks handed out before the writer has taken the oldest one's documents: enough to keep
every worker busy, few enough that analysed documents never pile up in memory when the writer
is the slower side (handing out every session at once held a whole 1M build's documents)."""
WORKER_GC_THRESHOLD = 100_000
"""Allocations between the cyclic garbage collector's young passes in an analysis worker
(Python's default: 700). Analysis makes no cyclic garbage (none found over 300 sessions), but
each pass walks the young objects and every tenth the older ones, the analysis caches among
them: a large share of a worker's CPU at the default (`scripts/bench_build.py`)."""


@dataclass
class SyncReport:
    sessions_indexed: int = 0
    sessions_deleted: int = 0
    sessions_unchanged: int = 0
    steps_indexed: int = 0
    skipped: list[Skip] = field(default_factory=list)
    warnings: list[Skip] = field(default_factory=list)
    """Files indexed as far as they could be read, and what of them could not be."""
    seconds: float = 0.0
    sessions_flagged: int = 0
    """Sessions whose supersede decisions changed (their files rewritten, then re-indexed)."""
    supersede_seconds: float = 0.0
    rebuilt_because: str | None = None
    """Why the live generation was rebuilt instead of synced (it was damaged)."""

    def as_dict(self) -> dict[str, object]:
        extra = {"rebuiltBecause": self.rebuilt_because} if self.rebuilt_because else {}
        return {
            "sessionsIndexed": self.sessions_indexed,
            "sessionsDeleted": self.sessions_deleted,
            "sessionsUnchanged": self.sessions_unchanged,
            "steps": self.steps_indexed,
            "skipped": [{"path": s.path, "reason": s.reason} for s in self.skipped],
            "warnings": [{"path": s.path, "reason": s.reason} for s in self.warnings],
            "seconds": round(self.seconds, 3),
            "sessionsFlagged": self.sessions_flagged,
            "supersedeSeconds": round(self.supersede_seconds, 3),
        } | extra


@dataclass
class PreparedSession:
    """A session read and analysed, ready for the writer."""

    session_id: str
    signature: str
    documents: EncodedDocuments
    steps: int
    skipped: list[Skip]
    warnings: list[Skip]
    facts: bytes
    """Encoded `SessionFacts` (supersede detection's input)."""
    content_signature: str = ""
    """The signature of the files read but `superseded.json` (`Listing.content_signature`)."""


def prepare_session(root: Path, session_id: str, signature: str | None = None) -> PreparedSession:
    """A session read and analysed; `signature`: its listing's, taken before it was read
    (a session new to the index is signed as it is read: `LoadedSession.signature`)."""
    loaded = KnowledgeStore(root).load_session(session_id)
    facts = SessionFacts(session_id)
    docs = encode_documents(session_documents(loaded, facts))
    return PreparedSession(
        session_id,
        signature or loaded.signature,
        docs,
        len(loaded.steps),
        loaded.skipped,
        loaded.warnings,
        facts.encode(),
        loaded.content_signature,
    )


def prepare_steps(
    root: Path, session_id: str, step_ids: set[str]
) -> tuple[str, list[dict[str, Any]], str]:
    """Documents of some steps of a session, read from its files now (their flags changed)."""
    store = KnowledgeStore(root)
    signature = list_session(root, session_id).signature
    loaded = store.load_session(session_id)
    docs = step_documents(
        loaded.steps, loaded.metadata, SessionContext(), 0, loaded.decisions, None, step_ids
    )
    return session_id, docs, signature


def _write_prepared(writer: IndexWriter, prepared: PreparedSession, report: SyncReport) -> int:
    writer.replace_session(
        prepared.session_id, prepared.documents, prepared.signature, prepared.facts
    )
    report.skipped.extend(prepared.skipped)
    report.warnings.extend(prepared.warnings)
    report.sessions_indexed += 1
    report.steps_indexed += prepared.steps
    return len(prepared.documents.json)


def _prepared(root: Path, work: list[tuple[str, str | None]]) -> Iterator[PreparedSession]:
    """Sessions read and analysed, in order (see `_map`)."""
    ids = [session_id for session_id, _ in work]
    signatures = [signature for _, signature in work]
    yield from _map(prepare_session, root, ids, signatures)


def _map(
    function: Callable[[Path, str, Any], T], root: Path, ids: list[str], extra: list[Any]
) -> Iterator[T]:
    """`function(root, id, extra)` for every session, in order: in worker processes for a bulk
    build (parsing and analysis are pure Python and parallelise per session), in this process
    for a few."""
    if len(ids) < PARALLEL_MIN_SESSIONS or (os.cpu_count() or 1) < 2:
        for session_id, more in zip(ids, extra, strict=True):
            yield function(root, session_id, more)
        return
    calls = list(zip(ids, extra, strict=True))
    # Workers are forked from a fork server, a process of their own with no threads (the
    # writer has threads: never fork it), which imports the analysis code once: spawned
    # workers each imported it again (a noticeable CPU cost apiece, twice per first build).
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(["__main__", "engine.index.indexer"])
    with ProcessPoolExecutor(
        PARALLEL_WORKERS, context, initializer=_start_worker_process, initargs=(os.getpid(),)
    ) as pool:
        running: deque[Future[list[T]]] = deque()
        for start in range(0, len(calls), CHUNK_SESSIONS):
            chunk = calls[start : start + CHUNK_SESSIONS]
            running.append(pool.submit(_map_chunk, function, root, chunk))
            if len(running) >= CHUNKS_AHEAD:
                yield from running.popleft().result()
        while running:
            yield from running.popleft().result()


def start_worker() -> None:
    """An analysis worker's set-up: what was imported stays out of the collector's passes
    (`gc.freeze`), and passes are rare (`WORKER_GC_THRESHOLD`)."""
    gc.freeze()
    gc.set_threshold(WORKER_GC_THRESHOLD)


def _start_worker_process(owner: int) -> None:
    """A pool worker's initializer: `start_worker`; the worker ends with the process `owner`
    that uses the pool, even killed (`end_with`); and it ends without tearing its interpreter
    down. Its results are sent by then (the pool's result pipe is written synchronously) and it
    has nothing to flush or close, but a teardown frees every module and every cached analysis
    value one object at a time, a noticeable share of a build's CPU (`scripts/bench_build.py`)."""
    start_worker()
    end_with(owner)
    atexit.register(os._exit, 0)


def _map_chunk(
    function: Callable[[Path, str, Any], T], root: Path, chunk: list[tuple[str, Any]]
) -> list[T]:
    """One worker's share of `_map`: consecutive sessions, one round trip."""
    return [function(root, session_id, more) for session_id, more in chunk]


def sync(
    store: KnowledgeStore,
    writer: IndexWriter,
    progress: ProgressFn | None = None,
    commit_every: int | None = COMMIT_EVERY_DOCS,
) -> SyncReport:
    """Bring the index in line with the files: add new, re-index changed, drop deleted sessions.

    A long sync of a live index commits every `commit_every` documents so that progress
    becomes searchable (None: once, at the end). New supersede decisions are then written to
    their files and the steps whose flag changed are re-indexed in place (`settle_supersessions`).
    """
    started = time.perf_counter()
    report = SyncReport()
    known = writer.manifest.signatures()
    on_disk = store.session_ids()
    changed: list[tuple[str, str | None]] = []
    for session_id in on_disk:
        if session_id not in known:
            # New to the index: its analysis worker signs its files as it reads them (a bulk
            # build would otherwise list every file here, one process, before any worker
            # starts, and each file would be listed and read).
            changed.append((session_id, None))
            continue
        signature = list_session(store.root, session_id).signature
        if known[session_id] == signature:
            report.sessions_unchanged += 1
        else:
            changed.append((session_id, signature))
    pending_docs = 0
    for done, prepared in enumerate(_prepared(store.root, changed), 1):
        pending_docs += _write_prepared(writer, prepared, report)
        if commit_every is not None and pending_docs >= commit_every:
            writer.commit()
            pending_docs = 0
        if progress:
            progress(report.sessions_unchanged + done, len(on_disk))
    deleted = set(known) - set(on_disk)
    for session_id in deleted:
        writer.delete_session(session_id)
        report.sessions_deleted += 1
    writer.commit()
    record_skips(store.root, writer.path, [*(s for s, _ in changed), *deleted], report)
    if changed or report.sessions_deleted or load_renames(writer.path) is None:
        settle_supersessions(store, writer, report)
    report.seconds = time.perf_counter() - started
    return report


def settle_supersessions(store: KnowledgeStore, writer: IndexWriter, report: SyncReport) -> None:
    """Detect supersessions over every session, write the decision files that changed and the
    generation's renames (`renamed_ids`), and re-index the steps whose flag changed (one more
    commit). Only those steps are analysed again: the first detection over a large root flags
    steps in a third of the sessions."""
    started = time.perf_counter()
    ledger = FactsLedger.load(writer.manifest)
    planner = Planner()
    for facts in ledger.facts.values():
        planner.add(facts)
    flagged = write_detected(store, ledger, planner=planner)
    write_renames(writer.path, planner.renames())
    sessions = sorted(flagged)
    steps = [flagged[s] for s in sessions]
    for session_id, docs, signature in _map(prepare_steps, store.root, sessions, steps):
        for step_id in flagged[session_id]:
            writer.delete_step(step_id)
        writer.add_documents(session_id, docs, signature, ledger.facts[session_id].encode())
    if flagged:
        writer.commit()
    report.sessions_flagged += len(flagged)
    report.supersede_seconds += time.perf_counter() - started


def rebuild(
    store: KnowledgeStore,
    base: Path,
    progress: ProgressFn | None = None,
    waiting: Callable[[int | None], None] | None = None,
) -> SyncReport:
    """Index everything into a new generation, then make it live atomically; vectors that the
    live generation holds are copied instead of embedded again.

    A step's document carries its supersede flag, and detection needs every session's facts,
    so the documents wait in a spool file until detection has run over all of them; then the
    documents of the steps whose flag it changed are re-flagged (nothing else in a document
    depends on the flag: `documents.reflag_step_document`) and all are added in their order.
    Re-flagging in place instead (as the live writer does) deletes and re-adds those steps, and
    Tantivy keeps counting deleted documents in its BM25 statistics until a merge drops them,
    so that index would rank differently from any later rebuild of the same files; building
    twice (once to write the decision files, once from them) cost a whole second build on a
    root with no decision files yet. This way a first build and every rebuild give the same
    flags, the same documents in the same order, and the same results.

    Rebuilds of one index take turns (`BuildLock`): while another runs, this one waits,
    telling `waiting` the other's pid every half second.
    """
    layout = IndexLayout(base)
    with BuildLock(base).held(waiting):
        generation = create_generation(layout, store.root)
        writer = IndexWriter(generation, reuse_vectors=layout.current())
        try:
            try:
                report = _build_settled(store, writer, progress)
            finally:
                writer.close()
        except BaseException:
            remove_folder(generation, ignore_errors=True)  # never leave an orphan generation
            raise
        layout.publish(generation)
    return report


def _build_settled(
    store: KnowledgeStore, writer: IndexWriter, progress: ProgressFn | None
) -> SyncReport:
    """Every session into the empty generation of `writer`, with supersede decisions detected
    before any document is added (see `rebuild`). One process holds one session's documents
    at a time: the others are pickled to an unnamed temporary file beside the index."""
    started = time.perf_counter()
    report = SyncReport()
    on_disk = store.session_ids()
    facts: dict[str, SessionFacts] = {}
    planner = Planner()
    with tempfile.TemporaryFile(dir=writer.path) as spool:
        for done, prepared in enumerate(_prepared(store.root, [(s, None) for s in on_disk]), 1):
            pickle.dump(prepared, spool, pickle.HIGHEST_PROTOCOL)
            session_facts = SessionFacts.decode(prepared.session_id, prepared.facts)
            facts[prepared.session_id] = session_facts
            planner.add(session_facts)  # indexed by screen while the workers analyse the rest
            if progress:
                progress(done, len(on_disk))
        detecting = time.perf_counter()
        ledger = FactsLedger(facts)
        flagged = write_detected(store, ledger, planner=planner)
        write_renames(writer.path, planner.renames())
        report.sessions_flagged = len(flagged)
        report.supersede_seconds = time.perf_counter() - detecting
        spool.seek(0)
        for _ in on_disk:
            prepared = pickle.load(spool)
            if prepared.session_id in flagged:
                reflagging = time.perf_counter()
                facts_now = ledger.facts[prepared.session_id].encode()
                prepared = _reflag(store, prepared, flagged[prepared.session_id], facts_now)
                report.supersede_seconds += time.perf_counter() - reflagging
            _write_prepared(writer, prepared, report)
    writer.commit()
    record_skips(store.root, writer.path, on_disk, report)
    report.seconds = time.perf_counter() - started
    return report


def _reflag(
    store: KnowledgeStore, prepared: PreparedSession, steps: set[str], facts: bytes
) -> PreparedSession:
    """`prepared` with the documents of `steps` flagged as the session's decision file now
    says (detection changed it), the session's new signature and its facts after detection.

    The new signature is taken only when nothing but the decision file changed since the
    session was read: a step recorded into it meanwhile is not in its documents, so it keeps
    the signature of what was read, and the next sync indexes it again."""
    decisions, _ = store.read_decisions(prepared.session_id)
    old = prepared.documents
    json = [
        _reflag_encoded(doc, decisions.get(step_id.split("/", 1)[1])) if step_id in steps else doc
        for step_id, doc in zip(old.step_ids, old.json, strict=True)
    ]
    now = list_session(store.root, prepared.session_id)
    unchanged = now.content_signature == prepared.content_signature
    signature = now.signature if unchanged else prepared.signature
    return replace(prepared, documents=replace(old, json=json), signature=signature, facts=facts)


def _reflag_encoded(encoded: str, decision: Supersession | None) -> str:
    """An encoded step document re-flagged (`documents.reflag_step_document`); its payload is
    the one bytes field (base64 in the encoded form) that changes."""
    doc = orjson.loads(encoded)
    doc["payload"] = base64.b64decode(doc["payload"])
    reflag_step_document(doc, decision)
    return encode_documents([doc]).json[0]


def ensure_index(
    store: KnowledgeStore, base: Path, progress: ProgressFn | None = None
) -> SyncReport:
    """Sync the live generation, or build one when there is none, it is damaged or built from
    another root (the report says why in `rebuilt_because`) or its schema is stale."""
    live = IndexLayout(base).held_current()  # held: no rebuild removes it while it is checked
    if live is None:
        return rebuild(store, base, progress)
    current, held = live
    if (other := other_root(base, store.root)) is not None:  # it is this root's index from now
        held.release()
        report = rebuild(store, base, progress)
        report.rebuilt_because = f"it held the index of another root, {other}"
        return report
    try:
        with held.released_on_error():
            GenerationCheck(current, vectors=True).verify(full=True)
            writer = IndexWriter(current)  # holds it too
    except IndexDamaged as exc:
        report = rebuild(store, base, progress)
        report.rebuilt_because = exc.reason
        return report
    except StaleIndex:
        return rebuild(store, base, progress)
    held.release()
    try:
        return sync(store, writer, progress)
    finally:
        writer.close()
