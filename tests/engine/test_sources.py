"""`sourceSession.stepCount` is exact whether or not the index holds deleted documents (it is
read from document frequencies only when none is deleted)."""

from engine import SearchInput
from engine.index import count, term
from tests.conftest import Knowledge


def step_counts(kb: Knowledge) -> dict[str, int]:
    engine = kb.engine(cache_searches=False)
    page = engine.search(SearchInput(query="send", limit=50, mode="keyword", scope="all"))
    return {
        row.sessionId: row.sourceSession.stepCount
        for row in page.steps()
        if row.sourceSession is not None
    }


def test_step_counts_are_exact_before_and_after_a_step_is_deleted(kb: Knowledge) -> None:
    kb.session("mm-s1", goal="send tokens")
    first = [kb.step("mm-s1", test_id=f"send-{n}") for n in range(3)]
    kb.session("mm-s2", goal="send again")
    kb.step("mm-s2", test_id="send-more")
    assert step_counts(kb) == {"mm-s1": 3, "mm-s2": 1}
    session, stem = first[1].split("/")
    next((kb.root / session / "steps").glob(f"{stem}.json")).unlink()
    assert step_counts(kb) == {"mm-s1": 2, "mm-s2": 1}
    searcher = kb.engine().reader.searcher()
    deleted = searcher.doc_freq("session_id", "mm-s1") - count(
        searcher, term(kb.engine().reader.schema, "session_id", "mm-s1")
    )
    assert deleted > 0, "the second answer was counted with deleted documents in the index"


def test_an_engine_kept_across_a_commit_reads_the_new_session_length(kb: Knowledge) -> None:
    """`sourceSession`s are kept per commit: one that adds a step to a session shows."""
    kb.session("mm-s1", goal="send tokens")
    kb.step("mm-s1", test_id="send-1")
    engine = kb.engine(cache_searches=False)
    request = SearchInput(query="send", limit=50, mode="keyword", scope="all")

    def lengths() -> set[int]:
        page = engine.search(request)
        return {row.sourceSession.stepCount for row in page.steps() if row.sourceSession}

    assert lengths() == {1}
    assert lengths() == {1}  # read again from what the engine kept
    kb.step("mm-s1", test_id="send-2")
    kb.index()
    engine.refresh()
    assert lengths() == {2}
