"""What `mm_knowledge_status` reports: documents, sessions, files skipped and why, index lag.

Skipped files are kept in `skipped.json` beside the index by whoever indexes (`engine.index.skips`),
so every process (reader or writer) can report them.
"""

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from pydantic import Field

from engine.core import Result
from engine.index import DOC_SESSION, DOC_STEP, IndexReader, count, read_manifest, term
from engine.records import (
    SESSION_FILE,
    STEPS_DIR,
    KnowledgeStore,
    list_session,
)

MTIME_SLACK_SECONDS = 2.0
"""File timestamps are coarse and writers' clocks differ a little: re-check recent changes."""
MAX_LISTED = 50


# -- status --------------------------------------------------------------------------------
class IndexLag(Result):
    """How far the index is behind the files: sessions not yet (re)indexed, and how long the
    longest-waiting of them has waited (seconds since its newest file was written)."""

    pendingSessions: int
    seconds: float
    sessions: list[str]


class IndexStatus(Result):
    health: str
    """"ok", "rebuilding", "damaged" or "unavailable" (see `LiveIndex.status`)."""
    healthReason: str | None
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
    warningCount: int = 0
    """Files indexed only as far as they could be read (`warnings` says what was left out)."""
    warnings: list[dict[str, str]] = Field(default_factory=list)
    currentSession: str | None = None
    error: str | None = None
    semantic: dict[str, Any] | None = None
    """The embedding model, its vectors, and why search is degraded to keywords (if it is)."""


def document_counts(reader: IndexReader) -> dict[str, int]:
    searcher, schema = reader.searcher(), reader.schema
    return {
        "steps": count(searcher, term(schema, "doc_type", DOC_STEP)),
        "sessions": count(searcher, term(schema, "doc_type", DOC_SESSION)),
    }


FolderStamp = tuple[int, int]
"""Modification times (ns) of a session's folder and its steps folder."""


class SessionListings:
    """Each session's listing signature (`engine.records.knowledge_root.list_session`), remembered
    with the stamps of its folders taken just before it was listed; the sessions whose signature
    differs from an index manifest's are the ones the index lacks or holds stale.

    Two readers share one cache in a server: the writer's reconcile, which lists every session
    afresh (`differing(fresh=True)`: it is the safety net, it trusts no stamp), and the index
    lag of `mm_knowledge_status`, which lists only sessions whose folders changed. So after the
    writer's start-up reconcile the first status call costs two `stat` calls per session, not
    a listing of every session (seconds for a large root). Our writers add and rename files, which
    touches the folders, so an unchanged stamp means an unchanged listing; folders changed
    within the last `MTIME_SLACK_SECONDS` are always listed again (a file added in the same
    timestamp tick as a listing leaves the stamp unchanged). A stamp taken before the listing
    can only make a later check list again, never trust a listing older than its stamp.
    """

    def __init__(self, store: KnowledgeStore) -> None:
        self.store = store
        self._known: dict[str, tuple[FolderStamp, str]] = {}

    def differing(self, signatures: dict[str, str], *, fresh: bool) -> list[str]:
        """Sessions on disk whose files differ from `signatures` (new or changed), in listing
        order, then those in `signatures` that are gone, sorted."""
        on_disk = self.store.session_ids()
        recent = time.time_ns() - int(MTIME_SLACK_SECONDS * 1e9)
        known: dict[str, tuple[FolderStamp, str]] = {}
        for session_id in on_disk:
            stamp = _folder_stamp(self.store, session_id)
            seen = self._known.get(session_id)
            if fresh or seen is None or seen[0] != stamp or max(stamp) >= recent:
                seen = (stamp, list_session(self.store.root, session_id).signature)
            known[session_id] = seen
        self._known = known
        changed = [s for s in on_disk if signatures.get(s) != known[s][1]]
        return changed + sorted(set(signatures) - set(on_disk))


class LagMeter:
    """Index lag that counts what is really missing: every session's files are compared with
    the signature the manifest holds for it (the sessions pending now, not those changed since
    the manifest was last written: a failed batch's sessions are older than the next commit of
    other sessions, and were missed that way). Listings are remembered (`SessionListings`,
    shared with the live writer's reconcile when given), so only sessions whose folders changed
    are listed again."""

    def __init__(self, store: KnowledgeStore, listings: SessionListings | None = None) -> None:
        self.store = store
        self.listings = listings or SessionListings(store)

    def measure(self, generation: Path | None) -> IndexLag:
        pending = self.listings.differing(read_manifest(generation), fresh=False)
        now = time.time()
        waits = [now - newest_mtime(self.store, s) for s in pending]
        return IndexLag(
            pendingSessions=len(pending),
            seconds=round(max([w for w in waits if w < now], default=0.0), 3),
            sessions=pending[:MAX_LISTED],
        )


def _folder_stamp(store: KnowledgeStore, session_id: str) -> FolderStamp:
    """Two `stat` calls on plain string paths (pathlib's overhead was most of a status call
    at 2,000 sessions)."""
    folder = os.path.join(store.root, session_id)
    times = []
    for path in (folder, os.path.join(folder, STEPS_DIR)):
        try:
            times.append(os.stat(path).st_mtime_ns)
        except (FileNotFoundError, NotADirectoryError):
            times.append(0)
    return times[0], times[1]


def newest_mtime(store: KnowledgeStore, session_id: str) -> float:
    """Modification time of a session's newest file (0 when it has none any more)."""
    base = store.root / session_id
    paths = [base / SESSION_FILE]
    with contextlib.suppress(FileNotFoundError, NotADirectoryError):
        paths += [Path(e.path) for e in os.scandir(base / STEPS_DIR) if e.name.endswith(".json")]
    times = []
    for path in paths:
        try:
            times.append(path.stat().st_mtime)
        except FileNotFoundError:
            continue
    return max(times, default=0.0)
