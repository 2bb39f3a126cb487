"""A damaged index is found, refused with MM_INDEX_UNAVAILABLE and rebuilt from the files.

Real Tantivy generations damaged the ways an adversarial run damaged them (random bytes in a
segment file, a deleted segment file, garbage in the manifest database or a meta file); every
search goes through `KnowledgeEngine`, as the CLI and the MCP server do.
"""

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from engine import KnowledgeEngine
from engine.core import IndexDamaged, SearchInput
from engine.index import (
    DAMAGE_FILE,
    FOOTER_TAIL,
    GenerationCheck,
    IndexLayout,
    ensure_index,
    rebuild,
    reported_damage,
)
from engine.live import LiveIndex
from engine.records import (
    KnowledgeStore,
    SessionMetadata,
    now_iso,
)
from tests.engine.test_live import step, wait_for


def scramble(path: Path) -> None:
    """Inverted bytes over the middle half of a file's body, in place (as a bad disk or a stray
    write): the body, not its Tantivy footer, so the check's verdict is always a checksum
    mismatch. The write is dated at least a millisecond after the file was made, as a later
    write is: the kernel's coarse clock could otherwise give both the same mtime."""
    before = path.stat()
    with path.open("r+b") as handle:
        handle.seek(before.st_size - FOOTER_TAIL.size)
        footer_len, _ = FOOTER_TAIL.unpack(handle.read(FOOTER_TAIL.size))
        body = before.st_size - FOOTER_TAIL.size - footer_len
        assert body >= 4, f"{path.name} has no body to damage"
        handle.seek(body // 4)
        middle = handle.read(body // 2)
        handle.seek(body // 4)
        handle.write(bytes(b ^ 0xFF for b in middle))
    if path.stat().st_mtime_ns - before.st_mtime_ns < 1_000_000:
        os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))


def segment_file(suffix: str) -> Callable[[Path], Path]:
    """The largest segment file of a kind (a generation may have several segments; the
    largest has a body worth damaging, and which one is taken does not depend on listing
    order)."""
    return lambda generation: max(generation.glob(f"*{suffix}"), key=lambda f: f.stat().st_size)


def overwrite(name: str, garbage: bytes) -> Callable[[Path], None]:
    def damage(generation: Path) -> None:
        (generation / name).write_bytes(garbage)

    return damage


DAMAGES: dict[str, Callable[[Path], None]] = {
    "bytes inverted in .idx": lambda g: scramble(segment_file(".idx")(g)),
    "bytes inverted in .store": lambda g: scramble(segment_file(".store")(g)),
    "bytes inverted in .term": lambda g: scramble(segment_file(".term")(g)),
    ".pos deleted": lambda g: segment_file(".pos")(g).unlink(),
    "garbage manifest.sqlite3": overwrite("manifest.sqlite3", b"\x8f" * 4096),
    "garbage meta.json": overwrite("meta.json", b'{"segments": [{"seg'),
    "garbage knowhow.json": overwrite("knowhow.json", b"\x00\xff"),
}


@pytest.fixture
def store(tmp_path: Path) -> KnowledgeStore:
    store = KnowledgeStore(tmp_path / "root")
    for session_id, test_id in (("mm-send1", "coin-overview-send"), ("mm-swap1", "swap-button")):
        store.write_session(SessionMetadata(sessionId=session_id, createdAt=now_iso()))
        store.record_step(step(session_id, test_id))
    return store


@pytest.fixture
def index_dir(store: KnowledgeStore, tmp_path: Path) -> Path:
    rebuild(store, tmp_path / "index")
    return tmp_path / "index"


def generation(index_dir: Path) -> Path:
    current = IndexLayout(index_dir).current()
    assert current is not None
    return current


def found(engine: KnowledgeEngine, query: str) -> set[str]:
    engine.refresh()
    return {r.stepId for r in engine.search(SearchInput(query=query)).results}


def test_a_whole_generation_passes_the_check(index_dir: Path) -> None:
    GenerationCheck(generation(index_dir)).verify(full=True)


@pytest.mark.parametrize("damage", DAMAGES)
def test_each_damage_is_found_and_search_is_refused(
    damage: str, store: KnowledgeStore, index_dir: Path
) -> None:
    damaged = generation(index_dir)
    DAMAGES[damage](damaged)
    with pytest.raises(IndexDamaged):
        GenerationCheck(damaged).verify(full=True)
    engine = KnowledgeEngine(store.root, index_dir)
    with pytest.raises(IndexDamaged) as raised:
        engine.search(SearchInput(query="send"))
    assert raised.value.code == "MM_INDEX_UNAVAILABLE"
    assert reported_damage(damaged), "reported to every process"


def test_damage_after_opening_is_caught_even_when_tantivy_panics(
    store: KnowledgeStore, index_dir: Path
) -> None:
    """Damaged postings of an open index can make Tantivy panic (PanicException, a
    BaseException): the engine verifies, reports the damage and answers IndexDamaged."""
    engine = KnowledgeEngine(store.root, index_dir)
    assert found(engine, "send") == {"mm-send1/0001-mm_click"}
    scramble(segment_file(".idx")(generation(index_dir)))
    with pytest.raises(IndexDamaged):
        found(engine, "send")
    other = KnowledgeEngine(store.root, index_dir)
    with pytest.raises(IndexDamaged):
        other.search(SearchInput(query="swap"))


@pytest.mark.parametrize("damage", ["garbage meta.json", "garbage knowhow.json"])
def test_a_meta_file_damaged_after_opening_is_found_by_the_next_search(
    damage: str, store: KnowledgeStore, index_dir: Path
) -> None:
    """A search re-reads the meta files only when they changed (by inode, size or mtime):
    garbage written over one in place is read, and refused."""
    engine = KnowledgeEngine(store.root, index_dir)
    assert found(engine, "send") == {"mm-send1/0001-mm_click"}
    assert found(engine, "send") == {"mm-send1/0001-mm_click"}  # the meta files unchanged
    DAMAGES[damage](generation(index_dir))
    with pytest.raises(IndexDamaged):
        engine.search(SearchInput(query="send"))


def test_knowhow_index_rebuilds_a_damaged_index_and_says_why(
    store: KnowledgeStore, index_dir: Path
) -> None:
    scramble(segment_file(".store")(generation(index_dir)))
    report = ensure_index(store, index_dir)
    assert report.rebuilt_because and ".store: checksum mismatch" in report.rebuilt_because
    assert report.as_dict()["rebuiltBecause"] == report.rebuilt_because
    assert generation(index_dir).name == "gen-0002"
    engine = KnowledgeEngine(store.root, index_dir)
    assert found(engine, "send") == {"mm-send1/0001-mm_click"}


@pytest.mark.parametrize("damage", ["bytes inverted in .idx", "garbage manifest.sqlite3"])
def test_the_live_writer_rebuilds_a_damaged_generation(
    damage: str, live: LiveIndex, store: KnowledgeStore, index_dir: Path
) -> None:
    """A reader meets the damage; the writer rebuilds from the files, steps recorded meanwhile
    included, and status says "rebuilding" (with the reason) until readers can search again."""
    engine = KnowledgeEngine(store.root, index_dir)
    assert found(engine, "swap") == {"mm-swap1/0001-mm_click"}
    damaged = generation(index_dir)
    DAMAGES[damage](damaged)
    store.record_step(step("mm-swap1", "swap-review-quote"))
    with pytest.raises(IndexDamaged):
        GenerationCheck(damaged).verify(full=True)

    def healed() -> bool:
        try:
            rebuilt = generation(index_dir) != damaged
            return rebuilt and "mm-swap1/0002-mm_click" in found(engine, "swap review quote")
        except IndexDamaged:
            return False

    wait_for(healed)
    wait_for(lambda: live.is_writer)
    assert live.stats.rebuilds == 1
    assert live.stats.lastRebuildReason
    # The batch that met the damage failed, so status says "stalled" until the writer's first
    # pass over the rebuilt generation succeeds (on a busy machine, after the step is found).
    wait_for(lambda: live.status(engine.document_counts).health == "ok")
    status = live.status(engine.document_counts)
    assert (status.health, status.healthReason) == ("ok", None)
    assert status.documents == {"steps": 3, "sessions": 2}


def test_status_tells_the_truth_while_a_generation_is_damaged(
    store: KnowledgeStore, index_dir: Path
) -> None:
    """Without a writer to rebuild it, a reported damage is "damaged", with its reason."""
    engine = KnowledgeEngine(store.root, index_dir)
    DAMAGES[".pos deleted"](generation(index_dir))
    with pytest.raises(IndexDamaged):
        found(engine, "send")
    status = LiveIndex(store, index_dir).status(engine.document_counts)  # never started
    assert status.health == "damaged"
    assert status.healthReason and ".pos is missing" in status.healthReason
    assert status.error and "damaged" in status.error
    assert (generation(index_dir) / DAMAGE_FILE).exists()
