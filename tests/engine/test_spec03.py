"""SPEC-03's `knowledge-store.test.ts` scenarios for `searchSteps`, ported to the real index.

`searchSteps(query, limit, 'current', testSessionId)` is a search with scope "current" and the
test session as the engine's current session; `'all', undefined` is scope "all".
"""

import pytest

from analyzers import analyze_query

SESSION = "mm-test-session"
SEND_NODE = ("e1", "button", "Send")


def current(kb, query):
    return kb.search(query, limit=10, scope="current", current_session=SESSION)


def everywhere(kb, query):
    return kb.search(query, limit=10, scope="all")


@pytest.fixture
def send_session(kb):
    """§4.2.3 `beforeEach`: the test session's metadata."""
    kb.session(
        SESSION,
        hours_ago=0,
        goal="Send 0.1 ETH to another account",
        flow_tags=["send"],
        tags=["visual-test"],
    )
    return kb


# -- §4.1.5 searchSteps with tokenized queries -------------------------------------------------


def test_finds_steps_when_any_token_matches(kb):
    kb.step(SESSION, test_id="send-button", screen="home", a11y=[SEND_NODE])
    assert len(current(kb, "send flow ETH to account").results) > 0


def test_ranks_results_by_token_coverage(kb):
    kb.step(SESSION, test_id="send-button")
    kb.step(SESSION, test_id="send-to-account")
    results = current(kb, "send account").results
    assert "send-to-account" in results[0].snippet
    assert [r.target["testId"] for r in results] == ["send-to-account", "send-button"]


# -- §4.2.3 searchSteps with session metadata --------------------------------------------------


def test_matches_session_goal_tokens(send_session):
    kb = send_session
    kb.step(SESSION)
    results = everywhere(kb, "send ETH account").results
    assert [r.sessionId for r in results] == [SESSION]


def test_prioritizes_sessions_with_matching_flow_tags(send_session):
    kb = send_session
    kb.session("mm-other-session", hours_ago=0, goal="Test swap functionality", flow_tags=["swap"])
    kb.step(SESSION, test_id="action-button")
    kb.step("mm-other-session", test_id="action-button")
    results = everywhere(kb, "send").results
    assert results[0].sessionId == SESSION


def test_applies_recency_bonus_to_recent_sessions(send_session):
    kb = send_session
    kb.session("mm-old-session", hours_ago=100, goal="Send tokens", flow_tags=["send"])
    kb.step("mm-old-session")
    kb.step(SESSION)
    results = everywhere(kb, "send").results
    assert [r.sessionId for r in results] == [SESSION, "mm-old-session"]


# -- §4.3.6 snippet generation with match info -------------------------------------------------


def test_includes_match_evidence_in_snippet(kb):
    kb.step(SESSION, test_id="send-button", a11y=[SEND_NODE])
    [result] = current(kb, "send").results
    assert "match:" in result.snippet
    assert result.matchedFields is not None
    assert 'a11y:button:"Send"' in result.matchedFields
    assert "testId:send-button" in result.matchedFields


def test_includes_session_goal_when_available(kb):
    kb.session(SESSION, hours_ago=0, goal="Test send flow", flow_tags=["send"])
    kb.step(SESSION)
    results = everywhere(kb, "send").results
    assert results[0].sessionGoal == "Test send flow"


def test_snippet_reads_like_the_spec_example(kb):  # §7.2
    kb.step(SESSION, test_id="send-button", screen="home", a11y=[SEND_NODE])
    snippet = current(kb, "send").results[0].snippet
    assert snippet.startswith("match: ")
    for part in ('a11y:button:"Send"', "testId:send-button", "labels: interaction", "screen: home"):
        assert part in snippet


# -- §4.4.3 searchSteps with tokenized testIds -------------------------------------------------


def test_matches_tokenized_test_id_components(kb):
    kb.step(SESSION, test_id="coin-overview-send-button")
    results = current(kb, "send").results
    assert len(results) > 0
    assert "testId:coin-overview-send-button" in results[0].matchedFields


def test_matches_camel_case_test_id_components(kb):
    kb.step(SESSION, test_id="sendTokenButton")
    results = current(kb, "token").results
    assert [r.target for r in results] == [{"testId": "sendTokenButton"}]


def test_coin_overview_matches_every_coin_overview_test_id(kb):  # §7.1
    for test_id in ("coin-overview-send-button", "coin-overview-swap-button", "account-menu"):
        kb.step(SESSION, test_id=test_id)
    results = current(kb, "coin-overview").results
    assert {r.target["testId"] for r in results} == {
        "coin-overview-send-button",
        "coin-overview-swap-button",
    }


# -- §4.5.4 searchSteps with synonyms ----------------------------------------------------------


def test_matches_when_using_synonym(kb):
    kb.step(SESSION, test_id="send-button", a11y=[SEND_NODE])
    results = current(kb, "transfer ETH").results
    assert len(results) > 0
    assert results[0].target == {"testId": "send-button"}


def test_matches_session_goals_via_synonyms(kb):
    kb.session(SESSION, hours_ago=0, goal="Send 0.1 ETH to another account", flow_tags=["send"])
    kb.step(SESSION)
    results = everywhere(kb, "transfer tokens").results
    assert len(results) > 0
    assert results[0].sessionGoal == "Send 0.1 ETH to another account"


def test_unlock_ranks_sessions_with_the_unlock_flow_tag_higher(kb):  # §7.1
    kb.session("mm-unlock", hours_ago=5, goal="Unlock the wallet", flow_tags=["unlock"])
    kb.step("mm-unlock", test_id="password-field", screen="unlock")
    kb.session("mm-other", hours_ago=5, goal="Check balance", flow_tags=["settings"])
    kb.step("mm-other", test_id="password-field", screen="unlock")
    assert everywhere(kb, "unlock").results[0].sessionId == "mm-unlock"


# -- §8 implementation hardening ---------------------------------------------------------------


def test_mm_click_query_matches_only_on_click(kb):  # §8.1
    assert "mm" not in {t.token for t in analyze_query("mm_click")}
    clicks = {kb.step(SESSION, test_id="a-button"), kb.step(SESSION, test_id="b-button")}
    kb.step(SESSION, "mm_type", test_id="amount-input")
    kb.step(SESSION, "mm_describe_screen")
    kb.step(SESSION, "mm_navigate")
    page = current(kb, "mm_click")
    assert {r.stepId for r in page.results} == clicks
    assert page.total == 2


def test_deterministic_session_tie_breaking(kb):  # §8.2
    for session_id, hours_ago in [("mm-tie-2", 80), ("mm-tie-1", 80), ("mm-tie-0", 79)]:
        kb.session(session_id, hours_ago=hours_ago, flow_tags=["send"])
        kb.step(session_id)
    expected = ["mm-tie-0", "mm-tie-1", "mm-tie-2"]
    for _ in range(3):
        assert [r.sessionId for r in everywhere(kb, "send").results] == expected


def test_matched_fields_are_deduplicated(kb):  # §8.3
    kb.session(SESSION, hours_ago=0, goal="Send, send and send again", flow_tags=["send", "send"])
    kb.step(
        SESSION,
        test_id="send-button-send",
        a11y=[SEND_NODE, ("e2", "button", "Send")],
        test_ids=["send-button-send", "send-button-send"],
    )
    [result] = current(kb, "send button send SEND").results
    fields = result.matchedFields
    assert len(fields) == len(set(fields))
    assert fields.count("testId:send-button-send") == 1
    assert fields.count("flowTag:send") == 1
    assert fields.count('a11y:button:"Send"') == 1
