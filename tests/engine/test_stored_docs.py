"""Stored documents are kept per searcher (`engine.query.doc_store_cache`): a search reads each one
once, and after a commit a search never sees what an earlier searcher's addresses held."""

import tantivy

from engine import SearchInput
from engine.query import ReadView, StoredDocs
from tests.conftest import FIXED_NOW, Knowledge


def addresses(kb: Knowledge, n: int) -> tuple[tantivy.Searcher, list[tantivy.DocAddress]]:
    searcher = kb.engine().reader.searcher()
    hits = searcher.search(tantivy.Query.all_query(), limit=n).hits
    return searcher, [address for _, address in hits]


def test_a_document_is_read_once_and_the_least_recently_read_is_dropped(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    for n in range(4):
        kb.step("mm-s1", test_id=f"send-{n}")
    searcher, (first, second, third) = addresses(kb, 3)
    docs = StoredDocs(searcher, capacity=2)
    kept_first = docs.doc(first)
    assert docs.doc(first) is kept_first  # kept: not read again
    assert docs.doc(first).to_dict() == searcher.doc(first).to_dict()
    docs.doc(second)
    docs.doc(first)  # read last: `second` is now the least recently read
    docs.doc(third)
    assert len(docs) == 2
    assert docs.doc(first) is kept_first
    assert docs.doc(second).to_dict() == searcher.doc(second).to_dict()  # read again


def test_a_view_of_another_searcher_does_not_use_what_one_searcher_kept(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    kb.step("mm-s1", test_id="send-1")
    searcher, (address,) = addresses(kb, 1)
    docs = StoredDocs(searcher)
    kept = docs.doc(address)
    other = kb.engine().reader.searcher()
    view = ReadView(other, kb.engine().reader.schema, FIXED_NOW, None, docs)
    assert view.doc(address) is not kept
    assert len(docs) == 1


def test_an_engine_kept_across_a_commit_shows_the_documents_of_the_new_one(kb: Knowledge) -> None:
    """Rewriting a session's steps gives their documents other addresses after the commit; an
    engine that kept the old searcher's documents by address would show the old steps."""
    kb.session("mm-s1", goal="send tokens")
    ids = [kb.step("mm-s1", test_id=f"send-{n}") for n in range(3)]
    engine = kb.engine(cache_searches=False)
    request = SearchInput(query="send", limit=10, mode="keyword", scope="all")

    def targets() -> dict[str, str]:
        page = engine.search(request)
        return {row.stepId: (row.target or {}).get("testId", "") for row in page.results}

    assert targets() == {ids[n]: f"send-{n}" for n in range(3)}
    kb.session("mm-s0", goal="send first", hours_ago=2.0)
    earlier = kb.step("mm-s0", test_id="send-early")
    kb.index()
    engine.refresh()
    assert targets() == {**{ids[n]: f"send-{n}" for n in range(3)}, earlier: "send-early"}
