"""Queries that hold nothing to search for, or nothing the records could hold, are answered: a
page with its coverage saying what was and was not understood, never an error or a crash."""

import pytest

from tests.conftest import Knowledge

ONE_IDENTIFIER = ("confirm-footer-button-" * 10)[:200]


@pytest.fixture(scope="module")
def corpus(module_kb: Knowledge) -> Knowledge:
    kb = module_kb
    kb.session("mm-bad", hours_ago=2, goal="Send ETH", flow_tags=["send"])
    kb.step("mm-bad", test_id="coin-overview-send", screen="send")
    kb.step("mm-bad", test_id="confirm-footer-button", screen="home")
    kb.engine()
    return kb


@pytest.mark.parametrize("query", ["the and of to with a", "?!... --- ;; ()", "🦊💸🔥"])
@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
def test_a_query_with_no_word_to_search_for_says_so(
    corpus: Knowledge, query: str, mode: str
) -> None:
    page = corpus.search(query, mode=mode)
    assert page.total == 0 and page.results == []
    assert page.coverage is not None
    assert page.coverage.covered == [] and page.coverage.uncovered == []
    assert page.hint is not None
    assert page.hint.startswith(f"The query {query!r} holds no word to search for")


@pytest.mark.parametrize("query", ["发送以太币给朋友", "ウォレットのロックを解除する"])
def test_words_no_step_holds_are_named(corpus: Knowledge, query: str) -> None:
    page = corpus.search(query)
    assert page.coverage is not None
    assert page.coverage.covered == []
    assert page.coverage.uncovered == [query]
    assert page.hint is not None and page.hint.startswith(f"No recorded step mentions '{query}'")


def test_a_long_run_of_one_identifier_is_not_held_by_any_step(corpus: Knowledge) -> None:
    page = corpus.search(ONE_IDENTIFIER)
    assert page.coverage is not None
    assert ONE_IDENTIFIER.lower() in [c.lower() for c in page.coverage.uncovered]
    assert page.hint is not None and page.hint.startswith("No step holds")
    assert all(r.confidence is not None and r.confidence < 1.0 for r in page.steps())
