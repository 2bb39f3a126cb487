"""Bring chosen sessions of the index up to date, cheaply.

A session that only gained step files (an agent recording) gets just the new documents, built
from a cached session context (`AppendCache`); any other change re-indexes it whole; a session
whose folder is gone is dropped. One commit per call. Used by the live index's writer.
"""

import sqlite3
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from engine.index.documents import SessionContext, session_documents, step_documents
from engine.index.generations import MANIFEST_FILE, IndexWriter, encode_documents
from engine.index.indexer import SyncReport
from engine.index.read_only import read_manifest_connection
from engine.records import (
    FileSig,
    Frontier,
    KnowledgeStore,
    Listing,
    LoadedSession,
    LoadedStep,
    SessionFacts,
    SessionMetadata,
    files_signature,
    frontier,
    list_session,
    newest,
    step_id_for,
    step_warnings,
    steps_in_order,
)

APPEND_CACHE_SESSIONS = 4096
SEED_NEW_FILES = 8
"""New step files a session indexed before this writer's tenure may have gained (`seeded`)."""
SEED_LOOKBACK = 200
"""Latest steps replayed to know the session as the agent saw it (`seeded`)."""


# -- indexing sessions ---------------------------------------------------------------------
@dataclass
class IndexedSession:
    """What the writer indexed of a session: enough to add appended steps without reading or
    re-indexing the earlier ones (their file signatures, the session as the agent saw it after
    the last step, the number of step documents)."""

    meta_sig: FileSig
    decisions_sig: FileSig | None
    files: dict[str, FileSig]
    names: Frontier | None
    """Where new step files must come to follow `files` (None: they can tell no order)."""
    context: SessionContext
    seq: int
    metadata: SessionMetadata
    facts: SessionFacts


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
    facts: dict[str, SessionFacts | None] = field(default_factory=dict)
    """Supersede facts of every session this sync touched (None: the session is gone)."""


def sync_sessions(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_ids: Iterable[str],
    cache: AppendCache | None = None,
    progress: Callable[[], None] | None = None,
    indexed_facts: Mapping[str, SessionFacts] | None = None,
) -> LiveReport:
    """Bring these sessions up to date, then commit once: a session whose folder is gone is
    dropped; one that only gained step files gets just those (with a cache);
    any other is re-indexed whole. `progress` is called after each session and as the commit
    embeds their texts (the writer's lease heartbeat: one large session takes a while).
    `indexed_facts` are the sessions' facts as indexed, when the caller holds them (the live
    writer's ledger): a session `seeded` from the manifest then takes its facts from there
    instead of decoding them again (they are never changed)."""
    started = time.perf_counter()
    report = LiveReport()
    for session_id in sorted(set(session_ids)):
        if not (store.root / session_id).is_dir():
            writer.delete_session(session_id)
            report.sessions_deleted += 1
            report.facts[session_id] = None
            if cache is not None:
                cache.put(session_id, None)
        elif not (
            cache is not None
            and _append(store, writer, session_id, cache, report, indexed_facts or {})
        ):
            _reindex(store, writer, session_id, cache, report)
        if progress is not None:
            progress()
    writer.commit(progress)
    report.seconds = time.perf_counter() - started
    return report


def _reindex(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_id: str,
    cache: AppendCache | None,
    report: LiveReport,
) -> None:
    listing = list_session(store.root, session_id)  # taken before reading: never newer than content
    loaded = store.load_session(session_id)
    facts = SessionFacts(session_id)
    docs = session_documents(loaded, facts)
    writer.replace_session(session_id, encode_documents(docs), listing.signature, facts.encode())
    report.skipped.extend(loaded.skipped)
    report.warnings.extend(loaded.warnings)
    report.sessions_indexed += 1
    report.steps_indexed += len(loaded.steps)
    report.facts[session_id] = facts
    if cache is not None:
        cache.put(session_id, remember(loaded, listing, facts))


def remember(loaded: LoadedSession, listing: Listing, facts: SessionFacts) -> IndexedSession | None:
    """The cache entry for a session just indexed whole, or None when it cannot be appended to
    (no readable `session.json`, or a skipped file we have no signature of)."""
    if not loaded.has_metadata_file or loaded.meta_sig is None:
        return None
    files = {s.step_id.split("/", 1)[1] + ".json": s.sig for s in loaded.steps}
    for skip in loaded.skipped:
        name = Path(skip.path).name
        if name not in listing.files:
            return None
        files[name] = listing.files[name]
    context = SessionContext()
    for step in loaded.steps:
        context.advance(context.see(step.record))
    return IndexedSession(
        loaded.meta_sig,
        listing.decisions_sig,
        files,
        frontier(list(files)),
        context,
        len(loaded.steps),
        loaded.metadata,
        facts,
    )


def seeded(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_id: str,
    listing: Listing,
    held: SessionFacts | None = None,
) -> IndexedSession | None:
    """The cache entry of a session indexed before this writer's tenure, rebuilt without
    indexing it again: a new step of a long session costs what the step costs, not what the
    session does (scripts/adversary.py's 50,000-step attack measures it).

    The index holds the session's files but its newest few (`SEED_NEW_FILES`) when the
    manifest's signature is that of those files (`files_signature`); the context after its
    last indexed step is replayed from its latest `SEED_LOOKBACK` steps, which must show an
    accessibility snapshot and testIds (what a context keeps of earlier steps) unless they are
    all of it. Anything else (names whose order needs the records' times, a hidden or
    unreadable entry, a file that cannot be read) is None: the session is indexed whole."""
    indexed = writer.manifest.session(session_id)
    meta, _ = store.read_metadata(session_id)
    if indexed is None or meta is None or listing.meta_sig is None:
        return None
    if listing.unreadable or listing.hidden:
        return None
    signature, facts = indexed
    sign = partial(files_signature, listing.meta_sig, listing.decisions_sig)
    tail = newest(list(listing.files), SEED_LOOKBACK + SEED_NEW_FILES)
    if tail is None:
        return None
    total, steps = len(listing.files), writer.indexed_steps(session_id)
    for new in dict.fromkeys([total - steps, *range(1, SEED_NEW_FILES + 1)]):
        if not 0 < new <= min(SEED_NEW_FILES, total):
            continue
        latest, fresh = tail[: len(tail) - new], set(tail[len(tail) - new :])
        files = {name: sig for name, sig in listing.files.items() if name not in fresh}
        if sign(files) != signature:
            continue
        context = _context_after(store, session_id, latest, whole=total - new <= SEED_LOOKBACK)
        if context is None:
            return None
        known = held if held is not None else SessionFacts.decode(session_id, facts)
        last = frontier(latest[-1:])  # names of one form, in order: the last one is the latest
        return IndexedSession(
            listing.meta_sig, listing.decisions_sig, files, last, context, steps, meta, known
        )
    return None


def _context_after(
    store: KnowledgeStore, session_id: str, latest: list[str], *, whole: bool
) -> SessionContext | None:
    """The session as the agent saw it after the step file `latest[-1]`, replayed from its
    latest steps (`whole`: they are all of it; None when they cannot tell it: see `seeded`)."""
    context, snapshot, shown = SessionContext(), False, False
    for name in latest[-SEED_LOOKBACK:]:
        try:
            record = context.see(store.read_step(session_id, name))
        except (OSError, ValueError, ValidationError):
            return None
        snapshot |= bool(record.observation.a11y.nodes)
        shown |= bool(record.observation.testIds)
        context.advance(record)
    return context if whole or (snapshot and shown) else None


def tail_documents(
    known: IndexedSession, steps: list[LoadedStep]
) -> tuple[list[dict[str, Any]], SessionContext, SessionFacts]:
    """Documents of steps appended after `known`, exactly as `session_documents` makes them,
    and the session's facts extended with them (`known` is left unchanged)."""
    context = replace(known.context)  # `advance` rebinds its maps, so the copy is independent
    facts = known.facts.copy()
    docs = step_documents(steps, known.metadata, context, known.seq, None, facts)
    return docs, context, facts


def _append(
    store: KnowledgeStore,
    writer: IndexWriter,
    session_id: str,
    cache: AppendCache,
    report: LiveReport,
    indexed_facts: Mapping[str, SessionFacts],
) -> bool:
    """Index only the new step files of a session, if that is all that changed."""
    listing = list_session(store.root, session_id)
    known = cache.get(session_id) or seeded(
        store, writer, session_id, listing, indexed_facts.get(session_id)
    )
    if known is None:
        return False
    files = listing.files
    if listing.meta_sig != known.meta_sig or listing.decisions_sig != known.decisions_sig:
        return False
    if listing.unreadable:
        return False  # the whole-session path reports them as skipped
    if any(files.get(n) != s for n, s in known.files.items()):
        return False
    new = [name for name in files if name not in known.files]
    names = known.names
    if new:
        if names is None or not names.admits(new):
            return False  # a step inserted before indexed ones changes their context
        names = names.extended(new)
    steps = []
    for name in new:
        try:
            record = store.read_step(session_id, name)
        except (OSError, ValueError, ValidationError):
            return False  # the whole-session path reports unreadable files with their reason
        if step_warnings(name, record):
            return False  # and the files it can read only in part, with the others of the session
        steps.append(LoadedStep(step_id_for(session_id, name), record, files[name]))
    steps = steps_in_order(steps)  # new steps at one place: by their time
    docs, context, facts = tail_documents(known, steps)
    writer.add_documents(session_id, docs, listing.signature, facts.encode())
    indexed = {**known.files, **{name: files[name] for name in new}}
    seq = known.seq + len(docs)
    grown = replace(known, files=indexed, names=names, context=context, seq=seq, facts=facts)
    cache.put(session_id, grown)
    report.facts[session_id] = facts
    report.sessions_indexed += 1
    report.steps_indexed += len(docs)
    report.appended.add(session_id)
    return True


def read_manifest(generation: Path | None) -> dict[str, str]:
    """The per-session signatures a generation was built from, read-only (any process)."""
    path = generation / MANIFEST_FILE if generation else None
    if path is None or not path.exists():
        return {}
    conn = read_manifest_connection(path)
    try:
        return dict(conn.execute("SELECT session_id, signature FROM sessions").fetchall())
    except sqlite3.Error:
        return {}
    finally:
        conn.close()
