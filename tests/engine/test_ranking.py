"""What ranks above what: exact over typo, prefix and synonym; whole identifiers over shared parts;
deterministic ties; and pages that add up to the whole result list."""

import pytest

from engine import ReadCache
from engine.core import SearchInput


def ranked(page):
    return [r.stepId for r in page.results]


def above(page, better, worse):
    """`better` is found, and `worse` is either not found or ranks below it."""
    ids = ranked(page)
    assert better in ids
    return worse not in ids or ids.index(better) < ids.index(worse)


# -- typo tolerance ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("typo", "test_id"),
    [
        ("sned", "send-button"),
        ("swpa", "swap-button"),
        ("confrim", "confirm-footer-button"),
        ("recipent", "recipient-address-input"),
        ("adress", "recipient-address-input"),
    ],
)
def test_a_typo_finds_the_word_meant(kb, typo, test_id):
    kb.session("mm-typos", goal="Wallet tour")
    for other in ("send-button", "swap-button", "confirm-footer-button", "recipient-address-input"):
        kb.step("mm-typos", test_id=other)
    page = kb.search(typo)
    assert page.results
    assert page.results[0].target == {"testId": test_id}


def test_a_typo_match_never_outranks_an_exact_one(kb):
    kb.session("mm-exact-vs-typo")
    exact = kb.step("mm-exact-vs-typo", test_id="swap-button")
    near = kb.step("mm-exact-vs-typo", test_id="swat-button")  # one edit from `swap`
    assert above(kb.search("swap"), exact, near)
    assert above(kb.search("swap button"), exact, near)


def test_a_word_gone_from_the_index_is_not_its_own_typo(kb):
    """The typo vocabulary is rebuilt once a minute, so it can still list a word the live index
    lost; such a word is no correction of itself (this divided by a zero distance)."""
    kb.session("mm-gone")
    gone = kb.step("mm-gone", test_id="swap-button")
    kept = kb.step("mm-gone", test_id="send-button")
    engine = kb.engine()
    assert ranked(engine.search(SearchInput(query="swap"))) == [gone]
    session_id, step_name = gone.split("/")
    (kb.root / session_id / "steps" / f"{step_name}.json").unlink()
    kb.index()
    engine.refresh()
    assert kept not in ranked(engine.search(SearchInput(query="swap")))


def test_the_typo_vocabulary_is_rebuilt_only_after_a_commit(kb):
    """Rebuilding a large vocabulary takes seconds; an index that did not change keeps its
    vocabulary however old, and a commit makes an old one be rebuilt with the new words."""
    kb.step("mm-vocab", test_id="swap-button")
    engine, kept = kb.engine(), ReadCache()
    first = kept.typos(engine.reader.searcher(), engine.reader)
    first.built_at -= 3600  # an hour old, as a long-lived server's is
    assert kept.typos(engine.reader.searcher(), engine.reader) is first
    added = kb.step("mm-vocab", test_id="bridge-button")
    kb.index()
    engine.refresh()
    rebuilt = kept.typos(engine.reader.searcher(), engine.reader)
    assert rebuilt is not first and set(rebuilt.doc_freq) > set(first.doc_freq)  # new words
    assert added in ranked(engine.search(SearchInput(query="brigde")))


def test_words_under_four_letters_get_no_typo_matches(kb):
    kb.step("mm-short", test_id="eth-balance")
    assert kb.search("eht").total == 0


# -- prefixes ----------------------------------------------------------------------------------


def test_a_prefix_finds_longer_words(kb):
    kb.step("mm-prefix-auth", "mm_navigate", screen="authentication")
    kb.step("mm-prefix-coin", test_id="coin-overview-send", screen="home")
    assert ranked(kb.search("auth")) == ["mm-prefix-auth/0001-mm_navigate"]
    assert ranked(kb.search("coin-overview")) == ["mm-prefix-coin/0001-mm_click"]


def test_a_prefix_match_is_weaker_than_a_whole_word_match(kb):
    whole = kb.step("mm-auth-word", "mm_navigate", screen="auth")
    longer = kb.step("mm-auth-prefix", "mm_navigate", screen="authentication")
    assert ranked(kb.search("auth")) == [whole, longer]
    whole_id = kb.step("mm-coin-word", test_id="coin-overview")
    longer_id = kb.step("mm-coin-prefix", test_id="coin-overview-send")
    assert ranked(kb.search("coin-overview")) == [whole_id, longer_id]


def test_an_exact_identifier_outranks_a_step_that_only_shares_its_parts(kb):
    parts_only = kb.step("mm-ident", test_id="button-send")
    exact = kb.step("mm-ident", test_id="send-button")
    page = kb.search("send-button")
    assert ranked(page)[:2] == [exact, parts_only]
    assert page.results[0].score > page.results[1].score


# -- synonyms ----------------------------------------------------------------------------------


def test_a_synonym_weighs_less_than_the_word_typed(kb):
    send = kb.step("mm-synonyms", test_id="send-button", a11y=[("e1", "button", "Send")])
    transfer = kb.step(
        "mm-synonyms", test_id="transfer-button", a11y=[("e1", "button", "Transfer")]
    )
    assert ranked(kb.search("transfer")) == [transfer, send]
    assert ranked(kb.search("send")) == [send, transfer]


# -- a11y refs ---------------------------------------------------------------------------------


def test_a_click_by_a11y_ref_is_found_by_the_name_the_ref_had(kb):
    kb.session("mm-a11y", goal="Swap tokens")
    kb.step(
        "mm-a11y",
        "mm_accessibility_snapshot",
        screen="swap",
        a11y=[("e7", "button", "Review swap"), ("e8", "link", "Settings")],
    )
    click = kb.step("mm-a11y", a11y_ref="e7", screen="swap")
    page = kb.search("review swap")
    hit = page.results[0]
    assert hit.stepId == click
    assert hit.target == {"a11yRef": "e7", "role": "button", "name": "Review swap"}
    assert 'target:button:"Review swap"' in hit.matchedFields
    assert 'ref: e7 (button "Review swap")' in hit.snippet


def test_a11y_refs_resolve_against_the_latest_snapshot_before_the_step(kb):
    kb.step("mm-a11y-latest", "mm_accessibility_snapshot", a11y=[("e1", "button", "Send")])
    kb.step("mm-a11y-latest", "mm_accessibility_snapshot", a11y=[("e1", "button", "Approve")])
    click = kb.step("mm-a11y-latest", a11y_ref="e1")
    page = kb.search("approve")
    assert ranked(page)[0] == click
    assert page.results[0].target["name"] == "Approve"
    assert kb.search("send", filters={"tool": "click"}).total == 0


# -- order -------------------------------------------------------------------------------------


def test_equal_scores_are_ordered_by_session_recency_then_step_id(kb):
    for session_id, hours_ago in [("mm-tie-b", 100), ("mm-tie-a", 100), ("mm-tie-new", 90)]:
        kb.session(session_id, hours_ago=hours_ago)
        kb.step(session_id, test_id="action-button")
    page = kb.search("action")
    assert len({r.score for r in page.results}) == 1  # same step, same recency bucket
    assert ranked(page) == [
        "mm-tie-new/0001-mm_click",
        "mm-tie-a/0001-mm_click",
        "mm-tie-b/0001-mm_click",
    ]


def test_a_step_that_worked_ranks_above_the_same_step_that_failed(kb):
    failed = kb.step("mm-outcome", test_id="swap-button", ok=False, error=("E", "flaky"))
    worked = kb.step("mm-outcome", test_id="swap-button")
    assert ranked(kb.search("swap button")) == [worked, failed]


def test_a_query_about_the_failure_finds_the_failed_step_first(kb):
    kb.step("mm-failure", test_id="swap-button")
    failed = kb.step(
        "mm-failure",
        test_id="swap-button",
        ok=False,
        error=("MM_TARGET_NOT_FOUND", "swap-button detached"),
    )
    assert ranked(kb.search("swap detached"))[0] == failed


def test_pages_add_up_to_every_result_once(kb):
    kb.session("mm-many", goal="wallet")
    for i in range(130):
        worked = i >= 100  # BM25 ranks these 30 below the 100 failures; the reranker above them
        test_id = "row-item-send" if worked else "button-send"
        kb.step("mm-many", test_id=test_id, ok=worked, error=None if worked else ("E", "x"))
    engine = kb.engine()
    seen = []
    for offset in range(0, 140, 20):
        page = engine.search(SearchInput(query="send", limit=20, offset=offset))
        assert page.total == 130
        seen += ranked(page)
    assert len(seen) == 130
    assert len(set(seen)) == 130


# -- sentences and places ----------------------------------------------------------------------


def test_a_verb_carrying_a_sentence_does_not_pick_the_element_it_happens_to_name(kb):
    """`how do I lock the wallet when I'm done`: `done` is grammar there, not the `Done`
    button of another screen."""
    kb.session("mm-lock", goal="Wallet tour")
    done = kb.step("mm-lock", test_id="pin-extension-done", screen="onboarding-completion")
    lock = kb.step("mm-lock", test_id="global-menu-lock", screen="home")
    assert above(kb.search("how do I lock the wallet when I'm done", mode="keyword"), lock, done)
    assert above(kb.search("pin extension done", mode="keyword"), done, lock)


def test_naming_a_screen_as_a_place_lifts_the_steps_done_on_it(kb):
    """`swap page` asks for what was done on the swap screen: against `swap` alone, the steps
    on that screen gain on a click elsewhere whose testId, name and landing say `swap`."""
    kb.session("mm-swap", goal="Wallet tour")
    for _ in range(3):
        kb.step("mm-swap", test_id="eth-overview-send", screen="home")
        led = kb.step(
            "mm-swap",
            test_id="coin-overview-swap",
            screen="swap",
            a11y=[("e1", "button", "Swap")],
            test_ids=[("coin-overview-swap", "Swap")],
        )
        on = kb.step("mm-swap", test_id="from-amount-input", screen="swap")
        kb.step("mm-swap", test_id="eth-overview-send", screen="send")

    def on_against_led(query):
        scores = {r.stepId: r.score for r in kb.search(query, mode="keyword").results}
        return scores[on] / scores[led]

    assert on_against_led("swap page") > 1.5 * on_against_led("swap")
