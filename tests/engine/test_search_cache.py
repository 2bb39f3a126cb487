"""The 5-minute search cache: a repeated search is answered from memory, any
commit makes it compute afresh, and a damaged index is refused, never answered from memory."""

import os
from pathlib import Path

import pytest

from engine.core import IndexDamaged, SearchInput, validate
from engine.index import IndexLayout
from engine.search import SearchCache, cache_key
from tests.conftest import Knowledge


@pytest.fixture
def kb(tmp_path: Path) -> Knowledge:
    kb = Knowledge(tmp_path)
    kb.session("mm-cache", goal="Send ETH")
    kb.step("mm-cache", test_id="coin-overview-send", screen="home")
    return kb


def send() -> SearchInput:
    return validate(SearchInput, {"query": "send"})


def test_an_identical_search_is_answered_from_the_cache(kb: Knowledge) -> None:
    engine = kb.engine()
    first = engine.search(send())
    engine.refresh()  # as the server does before every read: nothing was committed
    assert engine.search(send()) is first
    assert engine.search(send(), current_session="mm-cache") is not first
    assert engine.search(validate(SearchInput, {"query": "send", "limit": 5})) is not first
    keyword = engine.search(validate(SearchInput, {"query": "send", "mode": "keyword"}))
    assert keyword is not first and keyword.modeUsed == "keyword"


def test_a_commit_makes_the_same_search_compute_afresh(kb: Knowledge) -> None:
    engine = kb.engine()
    first = engine.search(send())
    kb.step("mm-cache", test_id="send-max-button", screen="send")
    kb.index()  # a commit to the same generation, as the live writer makes
    engine.refresh()
    again = engine.search(send())
    assert again is not first and again.total == first.total + 1


def test_an_answer_is_kept_five_minutes() -> None:
    now = [0.0]
    cache = SearchCache(clock=lambda: now[0])
    key = cache_key(send(), None, "gen-0001", b"commit")
    page = object()
    cache.put(key, page)  # type: ignore[arg-type]
    now[0] = 299.0
    assert cache.get(key) is page
    now[0] = 600.0
    assert cache.get(key) is None


def test_a_damaged_index_is_refused_not_answered_from_the_cache(kb: Knowledge) -> None:
    engine = kb.engine()
    assert engine.search(send()).total == 1
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None
    segment = next(generation.glob("*.idx"))
    before = segment.stat()
    with segment.open("r+b") as handle:  # flip the middle bytes: same size, later mtime
        handle.seek(before.st_size // 2)
        middle = handle.read(8)
        handle.seek(before.st_size // 2)
        handle.write(bytes(b ^ 0xFF for b in middle))
    os.utime(segment, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000_000))
    with pytest.raises(IndexDamaged):  # the same search, same commit: checked, not cached
        engine.search(send())
    with pytest.raises(IndexDamaged):  # and it stays refused
        engine.search(send())
