"""Commands about the index of the knowledge root: index (bring it up to date), reindex
(rebuild it into a new generation) and status (its health, as mm_knowledge_status says it)."""

from collections.abc import Callable
from functools import partial
from pathlib import Path

from engine import (
    IndexStatus,
    Settings,
    SyncReport,
    WriteFailed,
    WriterLease,
    ensure_index,
    rebuild,
)
from server.cli.answer import Answer, Call, answers, knowledge_root
from server.cli.render import cells_table, err, out, progress, sync_report
from server.index_status import index_status


@answers()
def index(*, call: Call) -> Answer:
    """Bring the index up to date with the knowledge root (builds it the first time).

    When a running `knowhow serve` holds the writer lease it keeps the index current itself:
    then this says so and exits 0."""
    settings = call.settings
    store = knowledge_root(settings)
    lease = WriterLease(settings.index)
    if settings.index.is_dir() and not lease.try_acquire():
        message = (
            f"a running knowhow server is the index writer of {settings.index} and keeps it "
            "current (recorded steps are searchable within about a second); nothing to do"
        )
        return {"indexedBy": "writer", "message": message}, partial(out.print, message)
    try:
        with progress("indexing", call.as_json) as advance:
            report = _writing(settings, lambda: ensure_index(store, settings.index, advance))
    finally:
        lease.release()
    return report.as_dict(), partial(sync_report, report)


@answers()
def reindex(*, call: Call) -> Answer:
    """Rebuild the index from the files into a new generation and swap it in atomically."""
    settings = call.settings
    store = knowledge_root(settings)
    waiting = waiting_for_another(settings.index)
    with progress("rebuilding", call.as_json) as advance:
        report = _writing(settings, lambda: rebuild(store, settings.index, advance, waiting))
    return report.as_dict(), partial(sync_report, report)


def waiting_for_another(index: Path) -> Callable[[int | None], None]:
    """What a rebuild tells while another rebuild of `index` runs (they take turns): said
    once, on stderr."""
    told: list[int | None] = []

    def tell(pid: int | None) -> None:
        if not told:
            told.append(pid)
            by = f" (process {pid})" if pid else ""
            err.print(f"another rebuild of {index} is running{by}: waiting for it to finish")

    return tell


@answers()
def status(*, call: Call) -> Answer:
    """The health of the index, as mm_knowledge_status reports it: documents, sessions, files
    skipped and why, lag behind the files, the writer, the embedding model."""
    engine = call.engine()
    found = index_status(call.live_index(), engine)
    return found, partial(_show_status, found)


def _show_status(found: IndexStatus) -> None:
    lag, semantic = found.indexLag, found.semantic or {}
    rows = [
        ["health", found.health + (f" ({found.healthReason})" if found.healthReason else "")],
        ["root", found.root],
        ["index", f"{found.index} ({found.generation or 'no generation'})"],
        ["documents", ", ".join(f"{n} {kind}" for kind, n in (found.documents or {}).items())],
        ["sessions on disk", str(found.sessionsOnDisk)],
        ["lag", f"{lag.pendingSessions} sessions, {lag.seconds:.0f} s" if lag else "-"],
        ["skipped files", str(found.skippedCount)],
        ["writer", f"pid {found.writerPid}" if found.writerPid else "none running"],
    ]
    if semantic:
        degraded = semantic.get("degraded")
        rows.append(["model", str(semantic.get("model")) + (f" ({degraded})" if degraded else "")])
    if found.error:
        rows.append(["error", found.error])
    cells_table("index status", ["field", "value"], rows)
    for skip in found.skipped:
        err.print(f"skipped {skip}", markup=False)


def _writing(settings: Settings, build: Callable[[], SyncReport]) -> SyncReport:
    """Run an index build; a refused write (disk full, no permission, a file where a folder
    should be) is `MM_WRITE_FAILED` naming the index, as a recording tool's is. The store
    reports unreadable knowledge files as skips, so an OSError that escapes is the index's."""
    try:
        return build()
    except OSError as exc:
        raise WriteFailed.for_index(exc, settings.index) from exc
