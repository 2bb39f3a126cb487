"""Every page says which concepts of the query some result matched and which none did, a hint
says what is missing in one sentence, and each result's confidence never shows a weak hit as a
perfect one.

An agent cannot tell a real answer from noise by a score that is relative to the query's best
hit: a page whose every result misses what the query is about must say so.
"""

import pytest

from engine import SearchPage
from tests.conftest import Knowledge

SEND, SWAP, DAPP = "mm-cov-send", "mm-cov-swap", "mm-cov-dapp"
HOME = [("coin-overview-send", "Send"), ("coin-overview-swap", "Swap")]
HOME_A11Y = [("e1", "button", "Send"), ("e2", "button", "Swap")]


@pytest.fixture(scope="module")
def corpus(module_kb: Knowledge) -> Knowledge:
    kb = module_kb
    kb.session(SEND, hours_ago=3, goal="Send ETH to another account", flow_tags=["send"])
    kb.step(SEND, "mm_describe_screen", screen="home", test_ids=HOME, a11y=HOME_A11Y)
    kb.step(SEND, test_id="coin-overview-send", screen="send")
    kb.step(SEND, "mm_type", test_id="recipient-address-input", text="0xabc", screen="send")
    kb.step(SEND, test_id="send-continue-button", screen="confirm-transaction")
    kb.session(SWAP, hours_ago=5, goal="Swap ETH for USDC", flow_tags=["swap"])
    kb.step(SWAP, "mm_describe_screen", screen="home", test_ids=HOME, a11y=HOME_A11Y)
    kb.step(SWAP, test_id="coin-overview-swap", screen="swap")
    kb.step(
        SWAP,
        "mm_wait_for",
        test_id="swap-quote",
        screen="swap",
        ok=False,
        error=("MM_WAIT_TIMEOUT", "Wait timed out: locator.waitFor: Timeout 30000ms exceeded."),
    )
    kb.session(DAPP, hours_ago=8, goal="Connect the test dapp", flow_tags=["connect"])
    kb.step(
        DAPP,
        "mm_navigate",
        screen="home",
        ok=False,
        error=(
            "MM_NAVIGATION_FAILED",
            "Navigation failed: net::ERR_CONNECTION_REFUSED at http://localhost:8080/",
        ),
    )
    kb.engine()
    return kb


def search(kb: Knowledge, query: str, **fields: object) -> SearchPage:
    return kb.search(query, **fields)


def test_a_page_whose_words_are_all_found_covers_them_all(corpus: Knowledge) -> None:
    page = search(corpus, "send ETH")
    assert page.coverage is not None
    assert page.coverage.covered == ["send", "ETH"]
    assert page.coverage.uncovered == []
    assert page.hint is None


def test_a_word_no_step_holds_is_uncovered_and_the_hint_says_so(corpus: Knowledge) -> None:
    page = search(corpus, "claim the airdrop with ETH")
    assert page.coverage is not None
    assert page.coverage.uncovered == ["claim", "airdrop"]
    assert page.coverage.covered == ["ETH"]
    assert page.hint is not None
    assert page.hint.startswith("No recorded step mentions 'claim' or 'airdrop'")
    assert "'ETH'" in page.hint


def test_question_words_are_not_concepts(corpus: Knowledge) -> None:
    page = search(corpus, "how do I send ETH?")
    assert page.coverage is not None
    assert page.coverage.covered == ["send", "ETH"]
    assert page.coverage.uncovered == []
    assert page.hint is None


def test_an_identifier_no_step_holds_is_said_first(corpus: Knowledge) -> None:
    page = search(corpus, "gas-station-toggle")
    assert page.coverage is not None
    assert "gas-station-toggle" in page.coverage.uncovered
    assert page.hint is not None
    assert page.hint.startswith("No step holds 'gas-station-toggle'")


def test_an_identifier_a_step_holds_is_covered_whole(corpus: Knowledge) -> None:
    page = search(corpus, "coin-overview-send")
    assert page.coverage is not None
    assert page.coverage.covered == ["coin-overview-send"]
    assert page.coverage.uncovered == []
    assert page.hint is None


def test_a_typo_is_covered_by_its_correction(corpus: Knowledge) -> None:
    page = search(corpus, "sned ETH")
    assert page.coverage is not None
    assert page.coverage.uncovered == []


def test_a_session_page_says_its_coverage_too(corpus: Knowledge) -> None:
    page = search(corpus, "claim the airdrop with ETH", types=["session"])
    assert page.coverage is not None
    assert page.coverage.uncovered == ["claim", "airdrop"]


def test_a_page_of_no_results_says_what_was_not_found(corpus: Knowledge) -> None:
    page = search(corpus, "zzqxv", mode="keyword")
    assert page.total == 0
    assert page.coverage is not None
    assert page.coverage.uncovered == ["zzqxv"]
    assert page.hint is not None and "zzqxv" in page.hint


def test_an_exact_match_is_fully_confident(corpus: Knowledge) -> None:
    page = search(corpus, "coin-overview-send")
    top = page.steps()[0]
    assert top.confidence == 1.0


def test_a_hit_missing_what_the_query_is_about_is_not_confident(corpus: Knowledge) -> None:
    page = search(corpus, "claim the airdrop with ETH")
    assert page.steps()
    assert all(r.confidence is not None and r.confidence <= 0.5 for r in page.steps())


def test_confidence_is_between_zero_and_one_in_every_mode(corpus: Knowledge) -> None:
    for mode in ("hybrid", "keyword", "semantic"):
        page = search(corpus, "transfer some coins to a friend", mode=mode)
        for result in page.steps():
            assert result.confidence is not None and 0.0 <= result.confidence <= 1.0


def test_a_meaning_only_hit_is_never_shown_as_certain(corpus: Knowledge) -> None:
    page = search(corpus, "zzqxv wallet", mode="semantic")
    assert all(r.confidence is not None and r.confidence < 1.0 for r in page.steps())


def test_a_word_missing_only_within_the_filters_is_said_so(corpus: Knowledge) -> None:
    """'send' is in many steps, in none of the connect session's: a hint saying no recorded
    step mentions it sent the agent away from what it was looking for."""
    page = search(corpus, "send", filters={"flowTag": "connect"}, mode="keyword")
    assert page.total == 0 and page.hint is not None
    assert page.hint.startswith("No step within the scope and filters mentions 'send'")
    scoped = search(corpus, "send", scope={"sessionId": DAPP}, mode="keyword")
    assert scoped.hint is not None and scoped.hint.startswith("No step within the scope")


def test_an_unfiltered_miss_speaks_of_no_filters(corpus: Knowledge) -> None:
    page = search(corpus, "airdrop", mode="keyword")
    assert page.total == 0 and page.hint is not None
    assert page.hint.startswith("No recorded step mentions 'airdrop'")
    assert "with these filters" not in page.hint


def test_generic_words_of_a_sentence_are_not_concepts(corpus: Knowledge) -> None:
    """An agent's sentence is full of words no step needs to hold (`because`, `until`, `up`,
    `box`, `page`, `get`): counting them flagged most legitimate sentences as not covered."""
    page = search(corpus, "the box on the page would not get me through to send ETH because of it")
    assert page.coverage is not None
    assert page.coverage.uncovered == []
    assert page.coverage.covered == ["send", "ETH"]
    assert page.hint is None


def test_a_content_word_in_a_sentence_is_still_flagged(corpus: Knowledge) -> None:
    page = search(corpus, "how do I get the airdrop up on the page")
    assert page.coverage is not None
    assert page.coverage.uncovered == ["airdrop"]


def test_two_expressions_meaning_the_same_app_word_are_both_covered_by_it(kb: Knowledge) -> None:
    """`my coins` and `stablecoins` both mean a token (`analyzers.glossary`): a step holding
    `token` holds both, not only the first one the query says (the second was flagged as never
    recorded)."""
    kb.session(SWAP, goal="Swap")
    kb.step(SWAP, "mm_click", test_id="token-list-item", screen="swap")
    page = search(kb, "swap my coins for stablecoins", mode="keyword")
    assert page.coverage is not None
    assert page.coverage.uncovered == []
    assert {"my coins", "stablecoins"} <= set(page.coverage.covered)


def test_a_phrasal_verb_carrier_is_not_a_concept(corpus: Knowledge) -> None:
    """`turn` in `turn my ETH into something` carries the sentence like `get` or `make`."""
    page = search(corpus, "how do I turn the ETH into something else", mode="keyword")
    assert page.coverage is not None
    assert page.coverage.uncovered == []


def test_the_hint_names_only_what_the_results_shown_match(corpus: Knowledge) -> None:
    """In meaning-only search the results need not hold the words some other step holds: a
    hint saying they match 'ETH' would claim a match that is not there."""
    page = search(corpus, "airdrop from the dapp", mode="semantic", limit=1, minSimilarity=0.0)
    top = page.steps()[0]
    assert page.hint is not None
    assert top.matchType == "semantic", "the nearest step by meaning holds no word of the query"
    assert page.hint.endswith("results match by meaning.")


@pytest.mark.parametrize(
    "query",
    [
        # 58 words within the 200 characters a query may have
        "so I go to the home tab and I hit send and I pick ETH and I put in 1 and I hit go and "
        "it is not on the next tab so I go back and I hit send on it and it is not up yet so I "
        "ask why it is so odd to me",
        "what is it?",
        "envoyer des ETH à un ami, send ETH to a friend",
        "ウォレットから送金する send ETH",
        "why did clicking coin-overview-send on the home screen do nothing at all",
    ],
)
def test_bad_input_is_answered_in_the_envelope_with_honest_coverage(
    corpus: Knowledge, query: str
) -> None:
    """A 60-word sentence, a question of function words only, half another language, a testId
    inside a sentence: an answer, with its coverage true to what was and was not understood."""
    for mode in ("hybrid", "keyword", "semantic"):
        page = search(corpus, query, mode=mode)
        assert page.coverage is not None
        scores = [r.score for r in page.steps()]
        assert scores == sorted(scores, reverse=True)
        if query == "what is it?":
            assert page.total == 0 and page.hint is not None
            continue
        said = {w.lower() for w in page.coverage.covered + page.coverage.uncovered}
        assert said.isdisjoint({"the", "to", "so", "go", "up", "yet", "why", "at", "all", "not"})
        assert page.total > 0
        if "coin-overview-send" in query:
            assert "coin-overview-send" in page.coverage.covered
        if "ウ" in query:
            assert page.coverage.uncovered == ["ウォレットから送金する"]
        if "envoyer" in query:
            assert "send" in page.coverage.covered and "envoyer" in page.coverage.uncovered


def test_the_verbs_of_ui_testing_meet_the_actions_recorded(corpus: Knowledge) -> None:
    """`typing` is its own word to the stemmer and `press` no recorded word: both name the
    browser tools' actions (type, click), which the steps hold."""
    page = search(corpus, "typing the recipient address then pressing continue")
    assert page.coverage is not None
    assert page.coverage.uncovered == []
    assert {"typing", "pressing"} <= set(page.coverage.covered)


def test_a_word_said_differently_is_covered_by_meaning_and_said_so(corpus: Knowledge) -> None:
    """No step says 'budge', but the sentence as a whole is near the steps that sent ETH: the
    word is said differently, not something nobody recorded. The page must not flag it, and
    its hint must say the results match it by meaning, never by words."""
    page = search(corpus, "the continue button to send ETH would not budge")
    assert page.coverage is not None
    assert page.coverage.byMeaning == ["budge"]
    assert page.coverage.uncovered == []
    assert "budge" not in page.coverage.covered
    assert page.hint == "No step says 'budge'; the results match it by meaning, not by words."


def test_a_verb_no_step_holds_is_an_action_said_otherwise(corpus: Knowledge) -> None:
    """The records name actions with a few tool verbs; `paying` is how an agent says one. It is
    covered by meaning, never flagged as never recorded, while a thing no step holds is."""
    page = search(corpus, "which button do I press to start paying for ETH")
    assert page.coverage is not None
    assert page.coverage.uncovered == []
    assert "paying" in page.coverage.byMeaning
    thing = search(corpus, "which button do I press to start paying for the airdrop")
    assert thing.coverage is not None
    assert thing.coverage.uncovered == ["airdrop"]


def test_keyword_search_covers_nothing_by_meaning(corpus: Knowledge) -> None:
    page = search(corpus, "the continue button to send ETH would not budge", mode="keyword")
    assert page.coverage is not None
    assert page.coverage.byMeaning == []
    assert page.coverage.uncovered == ["budge"]


@pytest.mark.parametrize(
    "query", ["claim the airdrop with ETH", "gas-station-toggle", "swap ETH for stablecoins"]
)
def test_what_nobody_recorded_is_not_covered_by_meaning(corpus: Knowledge, query: str) -> None:
    """A query about something no step is about stays flagged: its sentence is far from every
    step, and an identifier no step holds is never matched by meaning."""
    page = search(corpus, query)
    assert page.coverage is not None
    assert page.coverage.uncovered and page.coverage.byMeaning == []
