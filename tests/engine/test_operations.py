"""`last`, `sessions` and `summarize`: what an agent sees when it asks what happened before."""

import pytest

from engine.core import (
    InvalidInput,
    LastInput,
    NoActiveSession,
    NotFound,
    SearchInput,
    SessionsInput,
    SummarizeInput,
    validate,
)

SEND, SWAP, ONBOARD = "mm-send", "mm-swap", "mm-onboard"


@pytest.fixture(scope="module")
def root(module_kb):
    kb = module_kb
    kb.session(
        SEND,
        hours_ago=2,
        goal="Send 0.1 ETH",
        flow_tags=["send"],
        tags=["smoke"],
        branch="feature/send",
    )
    kb.step(SEND, "mm_launch", screen="unlock")
    kb.step(
        SEND,
        "mm_describe_screen",
        screen="home",
        a11y=[("e1", "button", "Send"), ("e2", "button", "Swap")],
    )
    kb.step(SEND, a11y_ref="e1", screen="send")
    kb.step(SEND, "mm_type", test_id="ens-input", text="0xabc", screen="send")
    kb.step(SEND, "mm_type", test_id="amount-input", text="secret", redacted=True, screen="send")
    kb.step(
        SEND,
        test_id="send-continue",
        ok=False,
        screen="send",
        error=("MM_TARGET_NOT_FOUND", "send-continue is not visible"),
    )
    kb.step(SEND, "mm_wait_for", test_id="send-continue", screen="send")
    kb.step(SEND, test_id="send-continue", screen="confirm-transaction")
    kb.step(SEND, "mm_screenshot", screen="confirm-transaction")
    kb.session(
        SWAP,
        hours_ago=100,
        goal="Swap ETH for DAI",
        flow_tags=["swap"],
        tags=["regression"],
        branch="main",
    )
    kb.step(SWAP, test_id="swap-button", screen="swap")
    kb.step(
        SWAP,
        test_id="review-swap-button",
        ok=False,
        screen="swap",
        error=("TIMEOUT", "quote did not arrive"),
    )
    kb.session(ONBOARD, hours_ago=30, goal="Onboard", flow_tags=["onboarding"], tags=["smoke"])
    kb.step(ONBOARD, "mm_navigate", screen="onboarding-welcome")
    kb.engine()
    return kb


def last(kb, current_session=SEND, **fields):
    page = kb.engine().last(validate(LastInput, fields), current_session=current_session)
    return [s.stepId for s in page.steps], page.total


def sessions(kb, **fields):
    return kb.engine().sessions(validate(SessionsInput, fields))


def summarize(kb, current_session=SEND, **fields):
    request = validate(SummarizeInput, fields)
    return kb.engine().summarize(request, current_session=current_session)


# -- last --------------------------------------------------------------------------------------


def test_last_returns_the_newest_steps_oldest_first(root):
    assert last(root, n=3) == (
        [f"{SEND}/0007-mm_wait_for", f"{SEND}/0008-mm_click", f"{SEND}/0009-mm_screenshot"],
        9,
    )


def test_last_defaults_to_the_current_session(root):
    ids, total = last(root, current_session=SWAP)
    assert (ids, total) == ([f"{SWAP}/0001-mm_click", f"{SWAP}/0002-mm_click"], 2)


def test_last_across_all_sessions(root):
    ids, total = last(root, n=4, scope="all")
    assert total == 12
    assert ids == [
        f"{SEND}/0006-mm_click",
        f"{SEND}/0007-mm_wait_for",
        f"{SEND}/0008-mm_click",
        f"{SEND}/0009-mm_screenshot",
    ]
    everything, _ = last(root, n=200, scope="all")
    assert everything[:3] == [
        f"{SWAP}/0001-mm_click",
        f"{SWAP}/0002-mm_click",
        f"{ONBOARD}/0001-mm_navigate",
    ]


def test_last_of_one_session_with_filters(root):
    assert last(root, scope={"sessionId": SWAP}, filters={"ok": False}) == (
        [f"{SWAP}/0002-mm_click"],
        1,
    )
    assert last(root, scope="all", filters={"tag": "smoke", "tool": "navigate"}) == (
        [f"{ONBOARD}/0001-mm_navigate"],
        1,
    )
    assert last(root, scope="all", filters={"ok": False}) == (
        [f"{SWAP}/0002-mm_click", f"{SEND}/0006-mm_click"],
        2,
    )


def test_last_without_a_current_session_says_what_to_do(root):
    with pytest.raises(NoActiveSession):
        last(root, current_session=None)


def test_last_summaries_carry_no_score(root):
    page = root.engine().last(LastInput(n=1), current_session=SEND)
    assert page.steps[0].score is None
    assert "score" not in page.steps[0].to_json_dict()


# -- sessions ----------------------------------------------------------------------------------


def test_sessions_are_listed_newest_first_with_step_counts(root):
    found = sessions(root)
    assert found.total == 3
    assert [(s.sessionId, s.stepCount, s.failedStepCount) for s in found.sessions] == [
        (SEND, 9, 1),
        (ONBOARD, 1, 0),
        (SWAP, 2, 1),
    ]
    send = found.sessions[0]
    assert send.goal == "Send 0.1 ETH"
    assert (send.flowTags, send.tags) == (["send"], ["smoke"])
    assert send.git == {"branch": "feature/send", "commit": "abc123"}
    assert send.createdAt == "2026-01-15T10:00:00.000Z"
    assert send.hasMetadata


def test_sessions_created_at_the_same_moment_keep_their_own_step_counts(kb):
    """Step counts are aggregated by the sessions' createdAt: two sessions sharing one must
    not share their counts."""
    for session_id, steps, failed in (("mm-twin-a", 3, 1), ("mm-twin-b", 1, 1), ("mm-solo", 2, 0)):
        kb.session(session_id, hours_ago=5 if session_id.startswith("mm-twin") else 6)
        for number in range(steps):
            kb.step(session_id, test_id=f"button-{number}", ok=number >= failed)
    kb.session("mm-empty", hours_ago=7)
    found = sessions(kb)
    assert [(s.sessionId, s.stepCount, s.failedStepCount) for s in found.sessions] == [
        ("mm-twin-a", 3, 1),
        ("mm-twin-b", 1, 1),
        ("mm-solo", 2, 0),
        ("mm-empty", 0, 0),
    ]


@pytest.mark.parametrize(
    ("filters", "expected"),
    [
        ({"flowTag": "swap"}, [SWAP]),
        ({"tag": "smoke"}, [SEND, ONBOARD]),
        ({"sinceHours": 24}, [SEND]),
        ({"sinceHours": 48}, [SEND, ONBOARD]),
        ({"gitBranch": "main"}, [SWAP]),
        ({"tag": "smoke", "flowTag": "onboarding"}, [ONBOARD]),
        ({"flowTag": "connect"}, []),
    ],
)
def test_sessions_filters(root, filters, expected):
    found = sessions(root, filters=filters)
    assert [s.sessionId for s in found.sessions] == expected
    assert found.total == len(expected)


def test_sessions_limit_keeps_the_newest(root):
    found = sessions(root, limit=2)
    assert [s.sessionId for s in found.sessions] == [SEND, ONBOARD]
    assert found.total == 3


# -- summarize ---------------------------------------------------------------------------------


def test_summary_lists_screens_in_order(root):
    recipe = summarize(root)
    assert recipe.screens == ["unlock", "home", "send", "confirm-transaction"]
    assert recipe.session.sessionId == SEND
    assert recipe.session.stepCount == 9
    assert recipe.skipped == []


def test_summary_lists_actions_with_their_targets(root):
    actions = [(a.tool, a.screen, a.target, a.text) for a in summarize(root).actions]
    assert actions == [
        ("mm_click", "home", 'a11y:button:"Send"', None),
        ("mm_type", "send", "testId:ens-input", "0xabc"),
        ("mm_type", "send", "testId:amount-input", "[REDACTED]"),
        ("mm_wait_for", "send", "testId:send-continue", None),
        ("mm_click", "send", "testId:send-continue", None),
    ]


def test_summary_lists_failures_and_what_recovered_them(root):
    [failure] = summarize(root).failures
    assert failure.stepId == f"{SEND}/0006-mm_click"
    assert (failure.errorCode, failure.errorMessage) == (
        "MM_TARGET_NOT_FOUND",
        "send-continue is not visible",
    )
    assert failure.target == "testId:send-continue"
    assert failure.recoveredBy.stepId == f"{SEND}/0007-mm_wait_for"


def test_an_unrecovered_failure_has_no_recovery(root):
    [failure] = summarize(root, scope={"sessionId": SWAP}).failures
    assert failure.errorCode == "TIMEOUT"
    assert failure.recoveredBy is None


def test_legacy_session_id_wins_over_scope(root):
    recipe = summarize(root, sessionId=ONBOARD, scope={"sessionId": SWAP})
    assert recipe.session.sessionId == ONBOARD
    assert recipe.actions[0].tool == "mm_navigate"


def test_summarize_refuses_scope_all(root):
    with pytest.raises(InvalidInput) as raised:
        summarize(root, scope="all")
    assert (raised.value.code, raised.value.field) == ("MM_INVALID_INPUT", "scope")


def test_summarize_an_unknown_session_is_not_found(root):
    with pytest.raises(NotFound) as raised:
        summarize(root, scope={"sessionId": "mm-never-recorded"})
    assert raised.value.code == "MM_NOT_FOUND"
    assert "mm-never-recorded" in raised.value.message


def test_summarize_current_without_a_session(root):
    with pytest.raises(NoActiveSession):
        summarize(root, current_session=None)


def test_summarize_reads_the_files_even_before_the_index_catches_up(kb):
    kb.step("mm-fresh", "mm_navigate", screen="onboarding-welcome")
    engine = kb.engine()
    kb.step("mm-fresh", test_id="create-wallet", screen="onboarding-password")
    recipe = engine.summarize(SummarizeInput(), current_session="mm-fresh")
    assert [a.target for a in recipe.actions] == [None, "testId:create-wallet"]
    assert engine.last(LastInput(), current_session="mm-fresh").total == 1


def test_an_empty_answer_on_a_session_the_index_has_not_caught_up_with_says_so(kb):
    """An agent records a step and asks for the last steps at once: the index (kept current
    by the writer, about a second behind) holds none yet, and an empty page alone read as
    "nothing was recorded"."""
    kb.session("mm-fresh", goal="Create a wallet")
    engine = kb.engine()
    kb.step("mm-fresh", test_id="create-wallet", screen="onboarding-password")
    page = engine.last(LastInput(), current_session="mm-fresh")
    assert page.total == 0
    assert page.hint is not None and "1 recorded step" in page.hint and "index" in page.hint
    search = engine.search(
        validate(SearchInput, {"query": "create wallet", "scope": "current"}),
        current_session="mm-fresh",
    )
    assert search.total == 0 and search.hint is not None and "1 recorded step" in search.hint
    kb.index()
    engine.refresh()
    page = engine.last(LastInput(), current_session="mm-fresh")
    assert page.total == 1 and page.hint is None
