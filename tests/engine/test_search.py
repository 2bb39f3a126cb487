"""Search over a small multi-session root: every filter, scopes, paging and tie-breaking.

The corpus is built once per module (read-only tests). Every step's session goal mentions
"wallet", so the query `wallet` matches all ten steps and filters decide what is left.
"""

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core import NoActiveSession, SearchInput, holds_unsafe_chars, validate

A, B, C = "mm-send-recent", "mm-swap-old", "mm-onboard-mid"
HOME_URL = "chrome-extension://abc/home.html#/"


@pytest.fixture(scope="module")
def corpus(module_kb):
    kb = module_kb
    kb.session(
        A,
        hours_ago=2,
        goal="Send 0.1 ETH from the wallet",
        flow_tags=["send"],
        tags=["smoke"],
        branch="feature/send",
    )
    kb.step(
        A,
        "mm_describe_screen",
        url=HOME_URL,
        test_ids=["coin-overview-send-button", "coin-overview-swap-button"],
        a11y=[("e1", "button", "Send"), ("e2", "button", "Swap")],
    )
    kb.step(A, test_id="coin-overview-send-button", screen="send", url=HOME_URL + "send")
    kb.step(A, "mm_type", test_id="ens-input", text="0xabc", screen="send")
    kb.step(
        A,
        test_id="send-continue",
        ok=False,
        screen="send",
        error=("MM_TARGET_NOT_FOUND", "send-continue is not visible"),
    )
    kb.step(A, test_id="confirm-footer-button", screen="confirm-transaction")
    kb.session(
        B,
        hours_ago=100,
        goal="Swap ETH for DAI in the wallet",
        flow_tags=["swap"],
        tags=["regression"],
        branch="main",
    )
    kb.step(B, test_id="coin-overview-swap-button", screen="swap")
    kb.step(B, "mm_type", test_id="swap-amount-input", text="5", screen="swap")
    kb.step(
        B,
        test_id="review-swap-button",
        ok=False,
        screen="swap",
        error=("TIMEOUT", "quote did not arrive"),
    )
    kb.session(
        C, hours_ago=30, goal="Onboard a new wallet", flow_tags=["onboarding"], tags=["smoke"]
    )
    kb.step(C, "mm_navigate", screen="onboarding-welcome")
    kb.step(C, test_id="onboarding-create-wallet", screen="onboarding-password")
    kb.engine()  # build the index once
    return kb


def steps(session_id, *numbers_and_tools):
    return {f"{session_id}/{n}" for n in numbers_and_tools}


A_ALL = steps(
    A, "0001-mm_describe_screen", "0002-mm_click", "0003-mm_type", "0004-mm_click", "0005-mm_click"
)
B_ALL = steps(B, "0001-mm_click", "0002-mm_type", "0003-mm_click")
C_ALL = steps(C, "0001-mm_navigate", "0002-mm_click")
EVERY_STEP = A_ALL | B_ALL | C_ALL


def search(kb, query="wallet", *, current_session=None, **fields):
    request = validate(SearchInput, {"query": query, "limit": 100, **fields})
    return kb.engine().search(request, current_session=current_session)


def found(kb, query="wallet", **fields):
    page = search(kb, query, **fields)
    ids = [r.stepId for r in page.results]
    assert page.total == len(ids), "total counts exactly the matching steps"
    return set(ids)


def test_the_corpus_query_matches_every_step(corpus):
    assert found(corpus) == EVERY_STEP


# -- filters -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"flowTag": "send"}, A_ALL),
        ({"flowTag": "SEND"}, A_ALL),
        ({"flowTag": "swap"}, B_ALL),
        ({"flowTag": "connect"}, set()),
        ({"tag": "smoke"}, A_ALL | C_ALL),
        ({"tag": "regression"}, B_ALL),
        ({"sinceHours": 24}, A_ALL),
        ({"sinceHours": 48}, A_ALL | C_ALL),
        ({"sinceHours": 720}, EVERY_STEP),
        ({"gitBranch": "feature/send"}, A_ALL),
        ({"gitBranch": "main"}, B_ALL),
        ({"ok": False}, steps(A, "0004-mm_click") | steps(B, "0003-mm_click")),
        ({"ok": True}, EVERY_STEP - steps(A, "0004-mm_click") - steps(B, "0003-mm_click")),
        ({"tool": "mm_type"}, steps(A, "0003-mm_type") | steps(B, "0002-mm_type")),
        ({"tool": "type"}, steps(A, "0003-mm_type") | steps(B, "0002-mm_type")),
        ({"tool": "mm_describe_screen"}, steps(A, "0001-mm_describe_screen")),
        ({"screen": "swap"}, B_ALL),
        ({"screen": "onboarding-password"}, steps(C, "0002-mm_click")),
        ({"flowTag": "send", "ok": False}, steps(A, "0004-mm_click")),
        ({"tag": "smoke", "tool": "mm_navigate"}, steps(C, "0001-mm_navigate")),
        (
            {"tag": "smoke", "sinceHours": 24, "screen": "send", "tool": "type"},
            steps(A, "0003-mm_type"),
        ),
        ({"flowTag": "swap", "gitBranch": "feature/send"}, set()),
    ],
)
def test_filters_are_exact_and_combine_with_and(corpus, filters, expected):
    assert found(corpus, filters=filters) == expected


@pytest.mark.parametrize("tool", ["mm_click", "click", "MM_CLICK"])
def test_tool_filter_takes_the_name_with_or_without_prefix(corpus, tool):
    clicks = {s for s in EVERY_STEP if s.endswith("mm_click")}
    assert found(corpus, filters={"tool": tool}) == clicks


def test_screen_filter_matches_the_screen_a_step_was_on_or_landed_on(corpus):
    on_send = found(corpus, filters={"screen": "send"})
    # typed and failed on `send`; the click that led there and the one that left it touch it too
    assert steps(A, "0003-mm_type", "0004-mm_click") <= on_send
    assert on_send <= steps(A, "0002-mm_click", "0003-mm_type", "0004-mm_click", "0005-mm_click")


def test_time_window_is_inclusive_after_and_exclusive_before(corpus):
    typed_at = corpus.now - timedelta(hours=2) + 3 * timedelta(seconds=10)
    after = {"after": typed_at.isoformat()}
    before = {"before": typed_at.isoformat()}
    assert found(corpus, filters=after) == steps(
        A, "0003-mm_type", "0004-mm_click", "0005-mm_click"
    )
    assert found(corpus, filters={**before, "flowTag": "send"}) == steps(
        A, "0001-mm_describe_screen", "0002-mm_click"
    )
    window = {
        "after": (corpus.now - timedelta(hours=31)).isoformat(),
        "before": (corpus.now - timedelta(hours=1)).isoformat(),
    }
    assert found(corpus, filters=window) == A_ALL | C_ALL
    naive_utc = {"before": (corpus.now - timedelta(hours=50)).replace(tzinfo=None).isoformat()}
    assert found(corpus, filters=naive_utc) == B_ALL


# -- scope -------------------------------------------------------------------------------------


def test_scope_all_current_and_one_session(corpus):
    assert found(corpus, scope="all") == EVERY_STEP
    assert found(corpus, scope="current", current_session=C) == C_ALL
    assert found(corpus, scope={"sessionId": B}) == B_ALL
    assert found(corpus, scope={"sessionId": B}, filters={"ok": False}) == steps(B, "0003-mm_click")
    assert found(corpus, scope={"sessionId": "mm-not-there"}) == set()


def test_search_defaults_to_all_sessions(corpus):
    page = corpus.engine().search(SearchInput(query="wallet", limit=100), current_session=C)
    assert {r.stepId for r in page.results} == EVERY_STEP


def test_scope_current_without_a_session_says_what_to_do(corpus):
    with pytest.raises(NoActiveSession) as raised:
        search(corpus, scope="current")
    assert raised.value.code == "MM_NO_ACTIVE_SESSION"
    assert '"all"' in raised.value.message


# -- paging ------------------------------------------------------------------------------------


def test_limit_offset_total_and_has_more(corpus):
    engine = corpus.engine()
    first = engine.search(SearchInput(query="wallet", limit=4))
    second = engine.search(SearchInput(query="wallet", limit=4, offset=4))
    last = engine.search(SearchInput(query="wallet", limit=4, offset=8))
    assert [p.total for p in (first, second, last)] == [10, 10, 10]
    assert [p.hasMore for p in (first, second, last)] == [True, True, False]
    assert [len(p.results) for p in (first, second, last)] == [4, 4, 2]
    paged = [r.stepId for p in (first, second, last) for r in p.results]
    everything = engine.search(SearchInput(query="wallet", limit=100))
    assert paged == [r.stepId for r in everything.results]


@pytest.mark.parametrize("offset", [10, 11, 500])
def test_offset_past_the_end_returns_nothing_and_the_same_total(corpus, offset):
    page = search(corpus, limit=5, offset=offset)
    assert (page.results, page.total, page.hasMore, page.offset) == ([], 10, False, offset)


def test_results_are_ordered_by_score(corpus):
    scores = [r.score for r in search(corpus, "send swap button").results]
    assert scores == sorted(scores, reverse=True)


def test_the_same_search_gives_the_same_page(corpus):
    pages = [search(corpus, "send button eth").model_dump() for _ in range(3)]
    assert pages[0] == pages[1] == pages[2]


# -- empty results -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("query", "filters"),
    [("qqqqzzzz", None), ("the to a", None), ("swap", {"flowTag": "connect"})],
)
def test_empty_results_carry_a_hint_and_the_known_flow_tags(corpus, query, filters):
    page = search(corpus, query, filters=filters)
    assert (page.total, page.results, page.hasMore) == (0, [], False)
    assert page.hint is not None and page.known is not None
    for flow_tag in ("send", "swap", "onboarding"):
        assert flow_tag in page.known.flowTags


def test_results_carry_no_hint(corpus):
    page = search(corpus, "swap")
    assert page.hint is None and page.known is None


# -- result shape ------------------------------------------------------------------------------


def test_a_result_describes_the_step(corpus):
    [hit] = search(corpus, "quote timeout", filters={"ok": False, "flowTag": "swap"}).results
    assert hit.stepId == f"{B}/0003-mm_click"
    assert hit.sessionId == B
    assert hit.tool == "mm_click"
    assert hit.screen == "swap"
    assert hit.ok is False
    assert hit.target == {"testId": "review-swap-button"}
    assert hit.labels == ["interaction", "error-recovery"]
    assert hit.sessionGoal == "Swap ETH for DAI in the wallet"
    assert "error:TIMEOUT" in hit.matchedFields
    assert hit.snippet.count("TIMEOUT") == 1  # the match names it; the snippet does not repeat it
    assert hit.timestamp.startswith("2026-01-11T")
    assert hit.score > 0


@given(st.text())
def test_a_value_holding_a_bidirectional_control_is_unsafe_to_show(text: str) -> None:
    for mark in ("\u202e", "\u2066", "\u200f", "\n", "\x1b"):
        assert holds_unsafe_chars(text + mark + text)
