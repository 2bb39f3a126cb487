"""What `mm_knowledge_status` reports: documents, sessions, files skipped and why, index lag.

Skipped files are kept in `skipped.json` beside the index by whoever indexes (`engine.skips`),
so every process (reader or writer) can report them.
"""

import contextlib
import os
import time
from pathlib import Path
from typing import Any

from engine.clauses import count, term
from engine.index import MANIFEST_FILE, IndexReader
from engine.results import Result
from engine.schema import DOC_SESSION, DOC_STEP
from engine.session_sync import read_manifest
from engine.skips import SkipLedger as SkipLedger
from engine.skips import read_skips as read_skips
from engine.store import (
    SESSION_FILE,
    STEPS_DIR,
    KnowledgeStore,
    list_session,
)

MTIME_SLACK_SECONDS = 2.0
"""File timestamps are coarse and writers' clocks differ a little: look a bit further back."""
MAX_LISTED = 50


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
    searcher, schema = reader.searcher(), reader.schema
    return {
        "steps": count(searcher, term(schema, "doc_type", DOC_STEP)),
        "sessions": count(searcher, term(schema, "doc_type", DOC_SESSION)),
    }


def index_lag(store: KnowledgeStore, generation: Path | None) -> IndexLag:
    """Sessions whose files are newer than the index, and how long the oldest change waits.

    Only sessions whose folder changed since the manifest's last write are compared in full
    (our writers add and rename files, which touches the folder): two stats per session instead
    of listing every step file, so status stays fast on large roots.
    """
    signatures = read_manifest(generation)
    since = _manifest_written(generation)
    on_disk = store.session_ids()
    recent = [s for s in on_disk if _folder_mtime(store, s) >= since]
    pending = [s for s in recent if signatures.get(s) != list_session(store.root, s).signature]
    pending += sorted(set(signatures) - set(on_disk))
    now = time.time()
    waits = [now - newest_mtime(store, s) for s in pending]
    return IndexLag(
        pendingSessions=len(pending),
        seconds=round(max([w for w in waits if w < now], default=0.0), 3),
        sessions=pending[:MAX_LISTED],
    )


def _manifest_written(generation: Path | None) -> float:
    """When the writer last recorded a commit (the manifest database or its WAL)."""
    if generation is None:
        return 0.0
    times = []
    for name in (MANIFEST_FILE, MANIFEST_FILE + "-wal"):
        with contextlib.suppress(FileNotFoundError):
            times.append((generation / name).stat().st_mtime)
    return max(times, default=0.0) - MTIME_SLACK_SECONDS


def _folder_mtime(store: KnowledgeStore, session_id: str) -> float:
    times = []
    for folder in (store.root / session_id, store.root / session_id / STEPS_DIR):
        with contextlib.suppress(FileNotFoundError):
            times.append(folder.stat().st_mtime)
    return max(times, default=0.0)


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
