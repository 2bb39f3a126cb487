"""`score` is what an agent reads the order by: it never increases down an answer, and in every
mode it is the result's relevance relative to the best candidate (0..1), so a keyword answer's
scores are not raw BM25 and an exact match ranked first by its tier does not sit above a
higher number.
"""

import pytest

from analyzers import is_sentence
from engine.meaning import SENTENCE_MEANING, SENTENCE_MEANING_AT_MOST, semantic_weight
from tests.conftest import Knowledge

S1, S2, S3 = "mm-score-send", "mm-score-swap", "mm-score-home"


@pytest.fixture(scope="module")
def corpus(module_kb: Knowledge) -> Knowledge:
    kb = module_kb
    kb.session(S1, hours_ago=3, goal="Send ETH to another account", flow_tags=["send"])
    kb.step(S1, "mm_describe_screen", screen="home", test_ids=[("coin-overview-send", "Send")])
    kb.step(S1, test_id="coin-overview-send", screen="send")
    kb.step(S1, "mm_type", test_id="recipient-address-input", text="0xabc", screen="send")
    kb.step(S1, test_id="send-continue-button", screen="confirm-transaction")
    kb.step(
        S1,
        test_id="confirm-footer-button",
        screen="confirm-transaction",
        ok=False,
        error=("MM_CLICK_FAILED", "Operation failed: locator.click: Element is not enabled"),
    )
    kb.session(S2, hours_ago=5, goal="Swap ETH for USDC on the swap page", flow_tags=["swap"])
    kb.step(S2, test_id="coin-overview-swap", screen="swap")
    kb.step(S2, "mm_type", test_id="from-amount", text="1", screen="swap")
    kb.step(S2, test_id="bridge-cta-button", screen="swap")
    kb.session(S3, hours_ago=1, goal="Open the account menu", flow_tags=["settings"])
    kb.step(S3, test_id="home-tab", screen="home")
    kb.engine()
    return kb


QUERIES = [
    "send ETH",
    "coin-overview-send send button swap",
    "why was the confirm button not enabled when I tried to send",
    "swap page amount",
]


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("mode", ["hybrid", "keyword", "semantic"])
def test_scores_never_increase_and_stay_within_zero_and_one(
    corpus: Knowledge, query: str, mode: str
) -> None:
    page = corpus.search(query, mode=mode, limit=20)
    scores = [r.score for r in page.steps()]
    assert scores, query
    assert all(0.0 <= s <= 1.0 for s in scores), scores
    assert scores == sorted(scores, reverse=True), scores


def test_a_sentence_always_leans_on_meaning_too() -> None:
    assert is_sentence("which thing do I press to begin paying someone")
    assert not is_sentence("send flow")
    assert not is_sentence("why did coin-overview-send fail on the home page")
    assert semantic_weight(1.0, sentence=True) == SENTENCE_MEANING > 0
    assert semantic_weight(1.0) == 0.0
    assert semantic_weight(0.0, sentence=True) == 1.0


def test_a_sentence_leans_on_meaning_as_far_as_its_nearest_step_is_near() -> None:
    """A sentence whose words the best keyword hit all holds still leans on meaning as much as
    its nearest step by meaning is similar, within bounds: a close match by meaning (0.55)
    counts more than the floor, a far one (0.2) no less than the floor, and no match lets
    meaning outweigh words the keyword leg fully explains past the ceiling."""
    assert semantic_weight(1.0, sentence=True, nearest=0.55) == 0.55
    assert semantic_weight(1.0, sentence=True, nearest=0.2) == SENTENCE_MEANING
    assert semantic_weight(1.0, sentence=True, nearest=0.9) == SENTENCE_MEANING_AT_MOST < 1.0
    assert semantic_weight(1.0, sentence=False, nearest=0.9) == 0.0
    assert semantic_weight(0.5, sentence=True, nearest=0.55) == 0.75


def test_a_question_asking_what_a_screen_shows_ranks_observed_screens_first(
    corpus: Knowledge,
) -> None:
    """Keyword search reads the question too: the step that looked at the home screen answers
    "what is on the home screen", before the clicks made there."""
    page = corpus.search("what is on the home screen", mode="keyword", limit=3)
    assert page.steps()[0].tool == "mm_describe_screen"
