"""The on-disk index: schema version check, incremental sync, the single writer, generations."""

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import orjson
import pytest
import tantivy

from engine import KnowledgeEngine
from engine.core import IndexUnavailable, SearchInput, SessionsInput, StaleIndex
from engine.index import (
    DOCSTORE_BLOCK_BYTES,
    META_FILE,
    SCHEMA_VERSION,
    BuildLock,
    IndexLayout,
    IndexReader,
    IndexWriter,
    ensure_index,
    indexer,
    rebuild,
    remove_folder,
)
from tests.engine.test_live import wait_for


def step_ids(page):
    return [r.stepId for r in page.results]


@pytest.fixture
def two_sessions(kb):
    kb.session("mm-send", hours_ago=3, goal="Send ETH to a friend", flow_tags=["send"])
    kb.step("mm-send", test_id="coin-overview-send-button")
    kb.step("mm-send", "mm_type", test_id="amount-input", text="0.1")
    kb.session("mm-swap", hours_ago=5, goal="Swap ETH for DAI", flow_tags=["swap"])
    kb.step("mm-swap", test_id="swap-button")
    return kb


def live_generation(kb):
    return IndexLayout(kb.index_dir).current()


# -- building and the schema version -----------------------------------------------------------


def test_without_an_index_search_says_how_to_build_it(kb):
    kb.step("mm-unindexed")
    engine = KnowledgeEngine(kb.root, kb.index_dir)
    with pytest.raises(IndexUnavailable) as raised:
        engine.search(SearchInput(query="click"))
    assert raised.value.code == "MM_INDEX_UNAVAILABLE"
    assert "knowhow index" in raised.value.message


def test_first_index_builds_a_generation_with_its_schema_version(two_sessions):
    report = two_sessions.index()
    assert (report.sessions_indexed, report.steps_indexed, report.skipped) == (2, 3, [])
    generation = live_generation(two_sessions)
    assert generation.name == "gen-0001"
    assert orjson.loads((generation / META_FILE).read_bytes())["schemaVersion"] == SCHEMA_VERSION


def test_a_generation_stores_documents_in_small_blocks_through_every_commit(two_sessions):
    """Tantivy's index settings live in its meta.json, rewritten by each commit: the block size
    set on the empty index must survive the build's commits and a later sync's."""
    kb = two_sessions
    kb.index()
    kb.step("mm-send", test_id="confirm-button")
    kb.index()
    tantivy_meta = orjson.loads((live_generation(kb) / "meta.json").read_bytes())
    assert tantivy_meta["index_settings"]["docstore_blocksize"] == DOCSTORE_BLOCK_BYTES < 16384
    assert "confirm-button" in str(kb.search("confirm button", mode="keyword").results[0].target)


def test_an_index_of_another_schema_version_is_refused_until_rebuilt(two_sessions):
    kb = two_sessions
    kb.index()
    stale = live_generation(kb)
    meta = stale / META_FILE
    meta.write_bytes(orjson.dumps({**orjson.loads(meta.read_bytes()), "schemaVersion": 1}))

    engine = KnowledgeEngine(kb.root, kb.index_dir, now=lambda: kb.now)
    with pytest.raises(StaleIndex) as raised:
        engine.search(SearchInput(query="send"))
    assert isinstance(raised.value, IndexUnavailable)
    assert raised.value.code == "MM_INDEX_UNAVAILABLE"
    assert "reindex" in raised.value.message
    with pytest.raises(StaleIndex):
        IndexWriter(stale)

    report = ensure_index(kb.store, kb.index_dir)
    assert report.sessions_indexed == 2
    assert live_generation(kb).name == "gen-0002"
    assert not stale.exists()
    assert step_ids(engine.search(SearchInput(query="swap"))) == ["mm-swap/0001-mm_click"]


def test_an_index_without_readable_meta_is_stale(two_sessions):
    kb = two_sessions
    kb.index()
    (live_generation(kb) / META_FILE).write_bytes(b"{broken")
    with pytest.raises(StaleIndex):
        IndexReader.open(IndexLayout(kb.index_dir))
    kb.index()
    assert live_generation(kb).name == "gen-0002"


def test_a_current_pointing_nowhere_is_rebuilt(two_sessions):
    kb = two_sessions
    kb.index()
    remove_folder(live_generation(kb))
    assert live_generation(kb) is None
    assert kb.index().sessions_indexed == 2
    assert kb.search("swap").total == 1


# -- incremental sync --------------------------------------------------------------------------


def test_sync_skips_unchanged_sessions(two_sessions):
    kb = two_sessions
    kb.index()
    report = kb.index()
    assert (report.sessions_indexed, report.sessions_unchanged, report.sessions_deleted) == (
        0,
        2,
        0,
    )


def test_changing_session_json_reindexes_that_sessions_steps(two_sessions):
    kb = two_sessions
    engine = kb.engine()
    assert engine.search(SearchInput(query="friend")).total == 2
    kb.session("mm-send", hours_ago=3, goal="Pay the landlord", flow_tags=["send"])

    report = kb.index()
    assert (report.sessions_indexed, report.sessions_unchanged) == (1, 1)
    engine.refresh()
    assert sorted(step_ids(engine.search(SearchInput(query="landlord")))) == [
        "mm-send/0001-mm_click",
        "mm-send/0002-mm_type",
    ]
    assert engine.search(SearchInput(query="friend")).total == 0
    [session] = engine.sessions(SessionsInput(filters={"flowTag": "send"})).sessions
    assert session.goal == "Pay the landlord"


def test_a_new_step_is_searchable_after_sync(two_sessions):
    kb = two_sessions
    engine = kb.engine()
    assert engine.search(SearchInput(query="recipient")).total == 0
    new = kb.step("mm-send", "mm_type", test_id="recipient-address-input", text="0xabc")
    kb.index()
    engine.refresh()
    assert step_ids(engine.search(SearchInput(query="recipient"))) == [new]


def test_a_deleted_step_file_is_dropped_after_sync(two_sessions):
    kb = two_sessions
    engine = kb.engine()
    (kb.root / "mm-send" / "steps" / "0002-mm_type.json").unlink()
    kb.index()
    engine.refresh()
    assert engine.search(SearchInput(query="amount")).total == 0
    assert engine.search(SearchInput(query="friend")).total == 1


def test_deleting_a_session_folder_removes_its_documents(two_sessions):
    kb = two_sessions
    engine = kb.engine()
    shutil.rmtree(kb.root / "mm-swap")
    report = kb.index()
    assert (report.sessions_deleted, report.sessions_unchanged) == (1, 1)
    engine.refresh()
    assert engine.search(SearchInput(query="swap")).total == 0
    assert [s.sessionId for s in engine.sessions(SessionsInput()).sessions] == ["mm-send"]
    assert kb.index().sessions_deleted == 0


def test_sync_equals_a_rebuild(two_sessions):
    kb = two_sessions
    kb.index()
    kb.session("mm-send", hours_ago=3, goal="Send DAI to a friend", flow_tags=["send"])
    kb.step("mm-swap", test_id="review-swap-button", ok=False, error=("TIMEOUT", "no quote"))
    kb.session("mm-new", goal="Connect to a dapp", flow_tags=["connect"])
    kb.step("mm-new", test_id="connect-button")
    kb.index()
    synced = KnowledgeEngine(kb.root, kb.index_dir, now=lambda: kb.now)
    queries = ["send dai friend", "swap", "connect dapp", "timeout quote", "button"]
    before = {q: synced.search(SearchInput(query=q)).model_dump() for q in queries}
    rebuild(kb.store, kb.index_dir)
    rebuilt = KnowledgeEngine(kb.root, kb.index_dir, now=lambda: kb.now)
    assert {q: rebuilt.search(SearchInput(query=q)).model_dump() for q in queries} == before


def test_a_copied_session_folder_is_indexed_under_its_own_name(two_sessions):
    kb = two_sessions
    kb.index()
    shutil.copytree(kb.root / "mm-swap", kb.root / "mm-swap-copy")
    kb.index()
    shutil.rmtree(kb.root / "mm-swap-copy")
    kb.index()
    page = kb.search("swap")
    assert step_ids(page) == ["mm-swap/0001-mm_click"]
    assert [r.sessionId for r in page.results] == ["mm-swap"]


# -- one writer, atomic generations -----------------------------------------------------------


def test_a_second_writer_on_the_same_generation_is_refused(two_sessions):
    kb = two_sessions
    kb.index()
    generation = live_generation(kb)
    writer = IndexWriter(generation)
    try:
        with pytest.raises(IndexUnavailable) as raised:
            IndexWriter(generation)
        assert raised.value.code == "MM_INDEX_UNAVAILABLE"
        with pytest.raises(IndexUnavailable):
            ensure_index(kb.store, kb.index_dir)
    finally:
        writer.close()
    IndexWriter(generation).close()  # the lock is released on close


def test_a_closed_writer_lets_go_of_its_generation(two_sessions):
    """Once closed, a writer (still referenced) has nothing of its generation open: it kept
    Tantivy's index, whose reader reloaded on a thread of its own after every commit it
    noticed, re-creating Tantivy's meta lock file in the generation even while the folder was
    being removed (which then failed: "Directory not empty")."""
    kb = two_sessions
    kb.index()
    generation = live_generation(kb)
    writer = IndexWriter(generation)
    writer.commit()
    writer.close()
    maps = Path("/proc/self/maps")
    wait_for(lambda: str(generation) not in maps.read_text())
    assert writer.path == generation


RE_CREATE = """
import os, sys
while True:
    try:
        os.close(os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT))
    except FileNotFoundError:
        pass
"""


def test_a_folder_is_removed_while_another_process_re_creates_a_file_in_it(tmp_path):
    """What a Tantivy thread nobody can wait for does to a generation being removed: it opens
    its meta lock file by path, creating it again. `remove_folder` moves the folder away first."""
    folder = tmp_path / "index-data" / "gen-0001"
    folder.mkdir(parents=True)
    for n in range(3000):
        (folder / f"segment-{n}").write_bytes(b"x")
    lock = folder / ".tantivy-meta.lock"
    re_creating = subprocess.Popen([sys.executable, "-c", RE_CREATE, str(lock)])
    try:
        wait_for(lock.exists)
        remove_folder(tmp_path / "index-data")
    finally:
        re_creating.kill()
        re_creating.wait()
    assert list(tmp_path.iterdir()) == []
    remove_folder(tmp_path / "index-data")  # gone already: nothing to do


def test_a_rebuild_waits_for_the_one_running_and_says_so(two_sessions):
    """Rebuilds take turns: while another holds the build lock, a rebuild waits, telling
    whose turn it is, and publishes nothing until its own turn."""
    kb = two_sessions
    kb.index()
    told: list[int | None] = []
    with BuildLock(kb.index_dir).held():
        waiting = threading.Thread(
            target=lambda: rebuild(kb.store, kb.index_dir, waiting=told.append)
        )
        waiting.start()
        deadline = time.monotonic() + 60
        while not told and time.monotonic() < deadline:
            time.sleep(0.05)
        assert told and told[0] == os.getpid()
        assert live_generation(kb).name == "gen-0001"
    waiting.join(60)
    assert live_generation(kb).name == "gen-0002"


def test_rebuild_swaps_generations_and_old_readers_keep_answering(two_sessions):
    """A rebuild never removes a generation in use: the old one stays while a reader holds
    it, and goes once nobody does."""
    kb = two_sessions
    engine = kb.engine()
    old_reader = IndexReader.open(IndexLayout(kb.index_dir))
    old_docs = old_reader.searcher().num_docs
    kb.step("mm-swap", "mm_type", test_id="swap-amount-input", text="5")

    rebuild(kb.store, kb.index_dir)

    assert live_generation(kb).name == "gen-0002"
    assert old_reader.path.exists(), "still held by the old reader"
    query = tantivy.Query.term_query(old_reader.schema, "doc_type", "step", index_option="basic")
    assert old_reader.searcher().search(query, limit=10, count=True).count == 3
    assert old_reader.searcher().num_docs == old_docs
    assert engine.search(SearchInput(query="swap amount")).results[0].stepId == (
        "mm-swap/0002-mm_type"
    )
    old_reader.held.release()
    IndexLayout(kb.index_dir).sweep()
    assert sorted(p.name for p in kb.index_dir.glob("gen-*")) == ["gen-0002"]


def test_rebuild_is_idempotent(two_sessions):
    kb = two_sessions
    first = rebuild(kb.store, kb.index_dir)
    second = rebuild(kb.store, kb.index_dir)
    assert (first.sessions_indexed, first.steps_indexed) == (second.sessions_indexed, 3)
    assert kb.search("eth").total == 3


def test_parallel_analysis_hands_back_every_session_in_order(kb, monkeypatch):
    """A bulk build analyses sessions in worker processes, a few small tasks ahead of the
    writer: every session comes back once, in order, as this process would have made it."""
    count = indexer.PARALLEL_MIN_SESSIONS
    ids = [kb.session(f"mm-s{i:03d}", goal=f"Goal {i}") for i in range(count)]
    for session_id in ids:
        kb.step(session_id, test_id=f"button-{session_id}")
    monkeypatch.setattr(indexer, "CHUNK_SESSIONS", 3)
    monkeypatch.setattr(indexer, "CHUNKS_AHEAD", 2)
    signatures = [None] * len(ids)
    parallel = list(indexer._map(indexer.prepare_session, kb.root, ids, signatures))
    assert [p.session_id for p in parallel] == ids
    assert [p.documents for p in parallel] == [
        indexer.prepare_session(kb.root, session_id).documents for session_id in ids
    ]
