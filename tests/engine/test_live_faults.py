"""The live index survives any fault of its worker: it backs off, retries, says so in status,
and indexes what was recorded meanwhile once the fault is gone.

The fault is real: the index's `CURRENT` pointer replaced by a folder, so reading it fails
with an OSError where the worker reads it, outside any batch (as an exhausted open-file limit
did under a flood of slow HTTP requests).
"""

from pathlib import Path

import pytest

from engine import (
    KnowledgeEngine,
    KnowledgeStore,
    LiveIndex,
    SearchInput,
    SessionMetadata,
    now_iso,
    rebuild,
)
from tests.engine.test_live import step, wait_for


@pytest.fixture
def store(tmp_path: Path) -> KnowledgeStore:
    return KnowledgeStore(tmp_path / "root")


def no_documents() -> dict[str, int]:
    return {}


@pytest.mark.parametrize("writer", [True, False], ids=["writer", "standby"])
def test_the_live_worker_survives_an_unreadable_pointer_and_says_so(
    store: KnowledgeStore, index_dir: Path, writer: bool
) -> None:
    store.write_session(SessionMetadata(sessionId="mm-fault1", createdAt=now_iso()))
    store.record_step(step("mm-fault1", "before-fault"))
    rebuild(store, index_dir)
    holder = LiveIndex(store, index_dir, retry_seconds=0.05)
    live = holder if writer else LiveIndex(store, index_dir, retry_seconds=0.05)
    pointer = index_dir / "CURRENT"
    try:
        assert holder.start(wait=10)
        if not writer:
            assert live.start(wait=10) and not live.is_writer
        name = pointer.read_bytes()
        pointer.unlink()
        pointer.mkdir()  # reading it now fails with IsADirectoryError
        store.record_step(step("mm-fault1", "during-fault"))
        wait_for(lambda: live.status(no_documents).health != "ok", timeout=60.0)
        assert "CURRENT" in (live.status(no_documents).healthReason or "")
        if not writer:
            holder.close()  # the standby must take over once the pointer is readable again
        pointer.rmdir()
        pointer.write_bytes(name)
        store.record_step(step("mm-fault1", "after-fault"))
        engine = KnowledgeEngine(store.root, index_dir)

        def indexed() -> set[str]:
            engine.refresh()
            page = engine.search(SearchInput(query="fault", limit=10))
            return {r.stepId for r in page.results}

        wait_for(lambda: len(indexed()) == 3, timeout=60.0)
        wait_for(lambda: live.status(engine.document_counts).health == "ok", timeout=60.0)
        assert live.is_writer
    finally:
        live.close()
        holder.close()
