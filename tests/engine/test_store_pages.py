"""A searcher's doc-store pages are unmapped every few searches and after any other read
(`engine.index.doc_store_pages`), never a mapping that could be another's, and nothing happens where
the system cannot say."""

import mmap
from pathlib import Path

import pytest

from engine import KnowledgeEngine, LastInput, SearchInput, SearchPage
from engine.index import (
    MAPS,
    RELEASE_GROWTH_BYTES,
    SEARCHES_PER_RELEASE,
    StoreMappings,
    doc_store_pages,
)
from tests.conftest import Knowledge

linux_only = pytest.mark.skipif(not MAPS.exists(), reason="needs /proc/self/maps")


def resident_kb(suffix: str, under: Path) -> int:
    """Resident kB of this process's mappings of files under `under` ending with `suffix`."""
    folder, total, counted = str(under.resolve()), 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        head = line.split(maxsplit=1)[0]
        if "-" in head and not head.endswith(":"):
            name = line.split(maxsplit=5)[5] if len(line.split()) > 5 else ""
            counted = name.startswith(folder) and name.endswith(suffix)
        elif head == "Rss:" and counted:
            total += int(line.split()[1])
    return total


def a_store_file(tmp_path: Path) -> Path:
    path = tmp_path / "segment.store"
    path.write_bytes(bytes(range(256)) * 4096)  # 1 MiB
    return path


def read_all(mapping: mmap.mmap) -> None:
    for offset in range(0, len(mapping), mmap.PAGESIZE):
        assert mapping[offset] == offset % 256


def search_until_released(
    engine: KnowledgeEngine, request: SearchInput, index_dir: Path
) -> list[SearchPage]:
    """`SEARCHES_PER_RELEASE` searches: the pages of the first ones stay mapped until the
    last one releases them all."""
    pages = []
    for _ in range(SEARCHES_PER_RELEASE - 1):
        pages.append(engine.search(request))
        assert resident_kb(".store", index_dir) > 0
    pages.append(engine.search(request))
    return pages


@linux_only
def test_searches_leave_no_doc_store_page_mapped_every_few_and_answer_the_same(
    kb: Knowledge,
) -> None:
    kb.session("mm-s1", goal="send tokens")
    for n in range(30):
        kb.step("mm-s1", test_id=f"send-button-{n}", screen="send")
    engine = kb.engine(cache_searches=False)
    request = SearchInput(query="send button", limit=50, mode="keyword")
    first, *again = search_until_released(engine, request, kb.index_dir)
    assert first.total == 30
    assert resident_kb(".store", kb.index_dir) == 0
    assert resident_kb(".idx", kb.index_dir) > 0  # postings stay mapped: every search reads them
    # The same searcher kept the documents it read (`engine.query.doc_store_cache`): searching again
    # maps no doc-store page.
    later = [engine.search(request) for _ in range(SEARCHES_PER_RELEASE)]
    assert all(page.model_dump() == first.model_dump() for page in again + later)
    assert resident_kb(".store", kb.index_dir) == 0
    kb.session("mm-s2", goal="send again")
    kb.step("mm-s2", test_id="send-button-new", screen="send")
    kb.index()
    engine.refresh()  # the old segment and a new one, in a searcher loaded anew: read anew
    after = search_until_released(engine, request, kb.index_dir)
    assert [page.total for page in after] == [31] * SEARCHES_PER_RELEASE
    assert resident_kb(".store", kb.index_dir) == 0


@linux_only
def test_searches_release_sooner_once_resident_memory_grew(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where the page cache holds a file in large folios, reading one stored document maps
    the whole folio: the pages are released as soon as resident memory grew by
    `RELEASE_GROWTH_BYTES` since the last release, not only every `SEARCHES_PER_RELEASE`
    searches. (The growth is simulated: each look at it finds a bit over half the bound.)"""
    kb.session("mm-s1", goal="send tokens")
    for n in range(30):
        kb.step("mm-s1", test_id=f"send-button-{n}", screen="send")
    engine = kb.engine(cache_searches=False)
    resident = [256 * 1024 * 1024]

    def growing() -> int:
        resident[0] += RELEASE_GROWTH_BYTES // 2 + 1
        return resident[0]

    monkeypatch.setattr(doc_store_pages, "resident_bytes", growing)
    request = SearchInput(query="send button", limit=50, mode="keyword")
    first = engine.search(request)  # the first read marks where memory stands
    assert resident_kb(".store", kb.index_dir) > 0
    assert engine.search(request).model_dump() == first.model_dump()  # half the bound: kept
    assert resident_kb(".store", kb.index_dir) > 0
    engine.refresh()  # a reload reads nothing, but over the bound now: released
    assert resident_kb(".store", kb.index_dir) == 0
    assert SEARCHES_PER_RELEASE > 3  # so neither release was the count's


@linux_only
def test_a_read_other_than_a_search_releases_at_once(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    for n in range(30):
        kb.step("mm-s1", test_id=f"send-button-{n}", screen="send")
    engine = kb.engine(cache_searches=False)
    engine.search(SearchInput(query="send button", limit=50, mode="keyword"))
    assert resident_kb(".store", kb.index_dir) > 0
    assert engine.last(LastInput(n=30, scope="all")).total == 30
    assert resident_kb(".store", kb.index_dir) == 0


@linux_only
def test_a_read_only_mapping_listed_once_is_released_and_reads_the_same(tmp_path: Path) -> None:
    path = a_store_file(tmp_path)
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapping:
        read_all(mapping)
        assert resident_kb(".store", tmp_path) > 0
        assert StoreMappings(frozenset({str(path.resolve())})).release() == len(mapping)
        assert resident_kb(".store", tmp_path) == 0
        read_all(mapping)  # the same bytes, mapped again from the page cache


@linux_only
def test_a_file_mapped_twice_or_writable_is_left_alone(tmp_path: Path) -> None:
    path = a_store_file(tmp_path)
    files = frozenset({str(path.resolve())})
    with path.open("r+b") as file:
        with mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_WRITE) as writable:
            read_all(writable)
            assert StoreMappings(files).release() == 0  # a written page would be lost
            assert resident_kb(".store", tmp_path) > 0
        with (
            mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as one,
            mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as two,
        ):
            read_all(one)
            read_all(two)
            assert StoreMappings(files).release() == 0  # either could be unmapped meanwhile
            assert resident_kb(".store", tmp_path) > 0


def test_without_a_maps_listing_nothing_is_released(tmp_path: Path) -> None:
    path = a_store_file(tmp_path)
    with path.open("rb") as file, mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ) as mapping:
        read_all(mapping)
        gone = StoreMappings(frozenset({str(path.resolve())}), maps=tmp_path / "no-maps")
        assert gone.release() == 0
        read_all(mapping)


def test_resident_memory_is_read_where_the_system_says_it(tmp_path: Path) -> None:
    """`/proc/self/statm`'s resident pages in bytes; None without the file or with a
    malformed one (then only the count of searches releases)."""
    if doc_store_pages.STATM.exists():
        resident = doc_store_pages.resident_bytes()
        assert resident is not None and resident > 1024 * 1024
    assert doc_store_pages.resident_bytes(tmp_path / "missing") is None
    (tmp_path / "statm").write_text("12")
    assert doc_store_pages.resident_bytes(tmp_path / "statm") is None
