"""Term counts are kept per searcher (`engine.query.term_counts`): what the term dictionaries
answered is asked once, and after a commit a search never plans with an older searcher's."""

import tantivy

from engine import SearchInput
from engine.index import SCORED_FIELDS
from engine.query import TermCounts
from tests.conftest import Knowledge


def test_counts_are_the_searchers_and_asked_once(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    for n in range(3):
        kb.step("mm-s1", test_id=f"send-button-{n}")
    searcher = kb.engine().reader.searcher()
    counts = TermCounts(searcher)
    found = counts.doc_freqs("send")
    assert found and found == {
        field: searcher.doc_freq(field, "send")
        for field in SCORED_FIELDS
        if searcher.doc_freq(field, "send")
    }
    assert counts.doc_freqs("send") is found  # kept: not asked again
    assert counts.doc_freqs("zebra") == {}
    completions = dict(counts.completions("send-but"))
    assert "send-button-0" in completions and "send-but" not in completions


def test_when_full_the_kept_counts_start_afresh(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    kb.step("mm-s1", test_id="send-1")
    counts = TermCounts(kb.engine().reader.searcher(), capacity=2)
    first = counts.doc_freqs("send")
    counts.doc_freqs("tokens")
    counts.doc_freqs("zebra")  # the third word: the two kept are dropped
    assert counts.doc_freqs("send") == first and counts.doc_freqs("send") is not first


def test_a_word_first_recorded_after_a_search_is_found_after_the_commit(kb: Knowledge) -> None:
    """An engine that kept the counts of the searcher before the commit would plan `zebra` as
    a word no document holds, and find nothing."""
    kb.session("mm-s1", goal="send tokens")
    kb.step("mm-s1", test_id="send-1")
    engine = kb.engine(cache_searches=False)
    request = SearchInput(query="zebra", limit=10, mode="keyword", scope="all")
    assert engine.search(request).total == 0
    recorded = kb.step("mm-s1", test_id="zebra-toggle")
    kb.index()
    engine.refresh()
    assert [row.stepId for row in engine.search(request).results] == [recorded]


def test_counts_name_only_the_fields_a_key_is_in(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    kb.step("mm-s1", test_id="send-1")
    searcher = kb.engine().reader.searcher()
    fields = ("sem_step", "sem_screen", "sem_session")
    keys: dict[str, str] = {}
    for _, address in searcher.search(tantivy.Query.all_query(), limit=10).hits:
        document = searcher.doc(address)
        keys.update({field: document[field][0] for field in fields if document[field]})
    counts = TermCounts(searcher)
    assert tuple(counts.doc_freqs(keys["sem_step"], fields)) == ("sem_step",)
    assert tuple(counts.doc_freqs(keys["sem_session"], fields)) == ("sem_session",)
    assert tuple(counts.doc_freqs("0" * 16, fields)) == ()
