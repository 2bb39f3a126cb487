"""`run_steps` batches are knowledge: one record holds several actions, and each of them is
searchable, evidenced, summarized, suggested and judged by supersede detection, with its
position in the batch. What the record cannot say (which inner action failed) is said so."""

from datetime import timedelta

from engine import ScreenContext, SearchInput, SummarizeInput, validate
from tests.compat.mm_format import Act, Node, Screen, Session, write_new
from tests.compat.scenarios import (
    CONFIRM,
    HOME,
    RECIPIENT,
    SEND,
    SEND_ACTS,
    SWAP,
    SWAP_ACTS,
    batched_send_flow,
)
from tests.conftest import FIXED_NOW, Knowledge


def swap_session(session_id: str = "mm-swap-a") -> tuple[Session, int]:
    """On the send screen, a batch goes home, waits for Swap and clicks it (index 2)."""
    session = Session(
        session_id, FIXED_NOW - timedelta(hours=5), goal="Swap ETH", flow_tags=["swap"]
    )
    session.step(Act("describe_screen"), SEND)
    session.batch(SWAP_ACTS, SWAP)
    return session, 1


def send_screen_now(session_id: str) -> ScreenContext:
    return ScreenContext(
        screen="send",
        url=SEND.url,
        test_ids=[t for t, _ in SEND.test_ids],
        a11y=[(n.role, n.name) for n in SEND.nodes],
        session_id=session_id,
    )


def test_an_inner_action_is_found_and_named_in_the_evidence(kb: Knowledge) -> None:
    session, at = swap_session()
    ids = write_new(kb.root, session)
    page = kb.search("coin-overview-swap")
    top = page.steps()[0]
    assert top.stepId == ids[at]
    assert top.tool == "run_steps"
    assert "batch[2].testId:coin-overview-swap" in (top.matchedFields or [])
    assert top.batch is not None
    assert [(a.index, a.tool) for a in top.batch] == [
        (0, "navigate"),
        (1, "wait_for"),
        (2, "click"),
    ]
    assert top.batch[2].target == {"testId": "coin-overview-swap"}


def test_the_tool_filter_finds_the_batches_holding_that_action(kb: Knowledge) -> None:
    session, at = swap_session()
    ids = write_new(kb.root, session)
    for tool in ("wait_for", "mm_wait_for"):
        page = kb.search("swap", filters={"tool": tool})
        assert [r.stepId for r in page.steps()] == [ids[at]]
    page = kb.search("swap", filters={"tool": "run_steps"})
    assert [r.stepId for r in page.steps()] == [ids[at]]


def test_a_batch_is_summarized_as_the_actions_it_took(kb: Knowledge) -> None:
    ids = write_new(kb.root, batched_send_flow("mm-send-b"))
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-send-b"}))
    rows = [(a.stepId, a.batchIndex, a.tool, a.target, a.text) for a in recipe.actions]
    assert rows == [
        (ids[2], 0, "click", "testId:coin-overview-send", None),
        (ids[2], 1, "type", "testId:recipient-address-input", RECIPIENT),
        (ids[2], 2, "type", "testId:send-amount-input", "0.1"),
        (ids[3], None, "click", "testId:send-continue-button", None),
        (ids[4], None, "click", "testId:confirm-footer-button", None),
    ]
    assert recipe.actions[0].screen == "home"
    assert recipe.actions[2].screen == "send"  # its field is on the screen the batch ended on
    assert recipe.failures == []


def test_a_failed_batch_says_it_worked_up_to_an_unknown_point(kb: Knowledge) -> None:
    session = Session("mm-send-f", FIXED_NOW - timedelta(hours=4), flow_tags=["send"])
    session.step(Act("describe_screen"), HOME)
    session.batch(
        SEND_ACTS,
        SEND,
        ok=False,
        error=("MM_BATCH_FAILED", "Batch stopped"),
        stop_on_error=True,
    )
    ids = write_new(kb.root, session)
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-send-f"}))
    assert recipe.actions == []  # none of them is known to have worked
    [failure] = recipe.failures
    assert failure.stepId == ids[1]
    assert failure.errorCode == "MM_BATCH_FAILED"
    assert failure.batch is not None and [a.batchIndex for a in failure.batch] == [0, 1, 2]
    assert failure.note is not None and "unknown" in failure.note

    page = kb.search("send amount input")
    row = next(r for r in page.steps() if r.stepId == ids[1])
    assert row.batch is not None and {a.outcome for a in row.batch} == {"unknown"}


def test_prior_knowledge_suggests_inner_actions_of_a_batch_that_worked(kb: Knowledge) -> None:
    ids = write_new(kb.root, batched_send_flow("mm-send-b"))
    write_new(kb.root, Session("mm-send-c", FIXED_NOW - timedelta(hours=1)))
    prior = kb.engine().prior_knowledge(send_screen_now("mm-send-c"))
    suggested = {str(s.preferredTarget.value): s for s in prior.suggestedNextActions}
    amount = suggested["send-amount-input"]
    assert amount.action == "type"
    assert (amount.stepId, amount.batchIndex) == (ids[2], 2)
    similar = {(s.stepId, s.batchIndex) for s in prior.similarSteps}
    assert (ids[2], 1) in similar


def test_prior_knowledge_neither_suggests_nor_avoids_actions_of_a_failed_batch(
    kb: Knowledge,
) -> None:
    for n in range(3):
        session = Session(f"mm-fail-{n}", FIXED_NOW - timedelta(hours=5 + n), flow_tags=["send"])
        session.step(Act("describe_screen"), HOME)
        session.step(Act("click", test_id="coin-overview-send"), SEND)
        session.batch(SEND_ACTS[1:], SEND, ok=False, error=("MM_BATCH_FAILED", "x"))
        write_new(kb.root, session)
    prior = kb.engine().prior_knowledge(send_screen_now("mm-send-z"))
    assert all(s.batchIndex is None for s in prior.suggestedNextActions)
    assert all(s.batchIndex is None for s in prior.similarSteps)
    batched = {"recipient-address-input", "send-amount-input"}
    assert not batched & {str(s.preferredTarget.value) for s in prior.suggestedNextActions}
    assert prior.avoid == []


def test_a_renamed_target_inside_a_batch_is_superseded(kb: Knowledge) -> None:
    old = Session("mm-old-ui", FIXED_NOW - timedelta(hours=50), flow_tags=["send"])
    old.step(Act("describe_screen"), HOME)
    old.batch(SEND_ACTS, SEND)
    old_ids = write_new(kb.root, old)
    renamed = Screen(HOME.name, HOME.url, [("wallet-send-button", "Send")], HOME.nodes)
    later = Session("mm-new-ui", FIXED_NOW - timedelta(hours=2), flow_tags=["send"])
    later.step(Act("describe_screen"), renamed)
    later.step(Act("describe_screen"), renamed)
    later.batch([Act("click", test_id="wallet-send-button"), *SEND_ACTS[1:]], SEND)
    new_ids = write_new(kb.root, later)
    kb.index()
    found, _ = kb.store.read_decisions("mm-old-ui")
    [(stem, decision)] = found.items()
    assert f"mm-old-ui/{stem}" == old_ids[1]
    assert decision.evidence == "renamed"
    assert decision.supersededBy is not None
    assert decision.supersededBy.stepId == new_ids[2]
    assert decision.supersededBy.target == "batch[0].testId:wallet-send-button"


def test_a_password_typed_inside_a_batch_is_never_shown_or_searchable(kb: Knowledge) -> None:
    unlock = Screen(
        "unlock",
        f"{HOME.url.split('#')[0]}#/unlock",
        [("unlock-password", ""), ("unlock-submit", "Unlock")],
        [Node("e1", "textbox", "Password"), Node("e2", "button", "Unlock")],
    )
    session = Session("mm-unlock-a", FIXED_NOW - timedelta(hours=3), flow_tags=["unlock"])
    session.step(Act("describe_screen"), unlock)
    session.batch(
        [
            Act("type", test_id="unlock-password", text="correct-horse-9"),
            Act("click", test_id="unlock-submit"),
        ],
        HOME,
    )
    ids = write_new(kb.root, session)
    raw = (kb.root / f"{ids[1]}.json".replace("mm-unlock-a/", "mm-unlock-a/steps/")).read_text()
    assert "correct-horse-9" in raw  # today's recorder does not redact inside batches
    assert kb.search("correct-horse-9").steps() == []
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-unlock-a"}))
    assert [a.text for a in recipe.actions if a.tool == "type"] == ["[REDACTED]"]
    page = kb.search("unlock password")
    assert "correct-horse-9" not in page.model_dump_json()


def test_aliases_and_ref_shorthand_of_batches_are_understood(kb: Knowledge) -> None:
    session = Session("mm-alias-a", FIXED_NOW - timedelta(hours=3))
    session.step(Act("describe_screen"), SEND)
    session.batch(
        [Act("navigate_home"), Act("click", args={"ref": "e2"})],
        HOME,
    )
    ids = write_new(kb.root, session)
    page = kb.search("amount textbox", filters={"tool": "click"})
    row = next(r for r in page.steps() if r.stepId == ids[1])
    assert row.batch is not None
    assert (row.batch[0].tool, row.batch[1].tool) == ("navigate", "click")
    assert row.batch[1].target == {"a11yRef": "e2", "role": "textbox", "name": "Amount"}


def test_a_batch_without_observations_still_counts(kb: Knowledge) -> None:
    session = Session("mm-quiet-a", FIXED_NOW - timedelta(hours=3), flow_tags=["send"])
    session.step(Act("describe_screen"), HOME)
    session.batch(SEND_ACTS, None, include_observations="none")
    ids = write_new(kb.root, session)
    request = validate(SearchInput, {"query": "recipient address input"})
    top = kb.engine().search(request).steps()[0]
    assert top.stepId == ids[1]
    assert "batch[1].testId:recipient-address-input" in (top.matchedFields or [])
    assert CONFIRM.name not in {top.screen}


def test_a_failed_batch_of_one_action_failed_in_that_action(kb: Knowledge) -> None:
    missing = ("MM_TARGET_NOT_FOUND", "Element not found: send-amount-field")
    for n in range(2):
        session = Session(f"mm-one-{n}", FIXED_NOW - timedelta(hours=5 + n), flow_tags=["send"])
        session.step(Act("describe_screen"), SEND)
        session.batch(
            [Act("type", test_id="send-amount-field", text="1")], SEND, ok=False, error=missing
        )
        write_new(kb.root, session)
    prior = kb.engine().prior_knowledge(send_screen_now("mm-send-z"))
    [avoid] = prior.avoid
    assert (avoid.target, avoid.errorCode, avoid.frequency) == (
        {"testId": "send-amount-field"},
        "MM_TARGET_NOT_FOUND",
        2,
    )
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-one-0"}))
    [failure] = recipe.failures
    assert (failure.tool, failure.target, failure.note) == (
        "type",
        "testId:send-amount-field",
        None,
    )


def test_a_batch_acting_twice_on_one_element_is_indexed_and_updated(kb: Knowledge) -> None:
    """Its two actions share the batch's time and step id: supersede detection keeps both
    (they once made a full build fail), also as the session changes."""
    session = Session("mm-twice-a", FIXED_NOW - timedelta(hours=5), flow_tags=["swap"])
    session.step(Act("describe_screen"), HOME)
    session.batch(SWAP_ACTS[1:], SWAP)
    ids = write_new(kb.root, session)
    assert kb.index().skipped == []
    top = kb.search("coin-overview-swap").steps()[0]
    assert top.stepId == ids[1]
    assert top.batch is not None and [a.tool for a in top.batch] == ["wait_for", "click"]
    session.batch(SWAP_ACTS[1:], SWAP)
    ids = write_new(kb.root, session)
    assert kb.index().sessions_indexed == 1
    assert {s.stepId for s in kb.search("coin-overview-swap").steps()} >= set(ids[1:])
