"""priorKnowledge: what worked last time on this screen, from all history, robust to renames."""

from engine.history import ScreenContext
from engine.records import A11yHint
from tests.conftest import Knowledge

HOME_IDS = [("coin-overview-send", "Send"), ("coin-overview-swap", "Swap")]
HOME_A11Y = [("e1", "button", "Send"), ("e2", "button", "Swap")]
SEND_IDS = [("recipient-address-input", ""), ("send-amount-input", "")]
SEND_A11Y = [("e1", "textbox", "Recipient address"), ("e2", "textbox", "Amount")]


def record_send_flow(kb: Knowledge, session_id: str, *, hours_ago: float = 30.0) -> None:
    """Agent A: home -> send (recipient, amount) -> confirm, every step observed."""
    kb.session(session_id, hours_ago=hours_ago, goal="Send 0.1 ETH", flow_tags=["send"])
    kb.step(session_id, "mm_describe_screen", screen="home", test_ids=HOME_IDS, a11y=HOME_A11Y)
    kb.step(
        session_id, test_id="coin-overview-send", screen="send", test_ids=SEND_IDS, a11y=SEND_A11Y
    )
    kb.step(session_id, "mm_type", test_id="recipient-address-input", text="0xabc", screen="send")
    kb.step(session_id, "mm_type", test_id="send-amount-input", text="0.1", screen="send")
    kb.step(session_id, test_id="send-continue-button", screen="confirm-transaction")


def send_screen(session_id: str, **overrides: object) -> ScreenContext:
    values: dict[str, object] = {
        "screen": "send",
        "url": "http://127.0.0.1/#/send",
        "test_ids": [t for t, _ in SEND_IDS],
        "a11y": [(role, name) for _, role, name in SEND_A11Y],
        "session_id": session_id,
    }
    values.update(overrides)
    return ScreenContext(**values)  # type: ignore[arg-type]


def test_suggests_what_worked_on_this_screen_in_other_sessions(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5, flow_tags=["send"])
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-b"))

    targets = [s.preferredTarget.value for s in prior.suggestedNextActions]
    assert set(targets[:2]) == {"recipient-address-input", "send-amount-input"}
    assert all(s.preferredTarget.type == "testId" for s in prior.suggestedNextActions[:2])
    assert [s.rank for s in prior.suggestedNextActions] == list(
        range(1, len(prior.suggestedNextActions) + 1)
    )
    assert all(0 < s.confidence <= 1 for s in prior.suggestedNextActions)
    # The click that *led* to the send screen was taken on home: not a send-screen suggestion.
    assert "coin-overview-send" not in targets


def test_the_current_session_is_not_its_own_prior_knowledge(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-a"))
    assert prior.suggestedNextActions == []
    assert prior.similarSteps == []


def test_a_renamed_testid_falls_back_to_the_element_with_the_same_role_and_name(
    kb: Knowledge,
) -> None:
    kb.session("mm-agent-a", hours_ago=30, flow_tags=["send"])
    kb.step("mm-agent-a", "mm_describe_screen", screen="send", test_ids=SEND_IDS, a11y=SEND_A11Y)
    # A typed into the recipient field by testId (the recorder noted its role and name), and
    # into the amount field by a11y ref (resolved from the snapshot before).
    record = kb.record("mm-agent-a", "mm_type", test_id="recipient-address-input", screen="send")
    assert record.tool.target is not None
    record.tool.target.a11yHint = A11yHint(role="textbox", name="Recipient address")
    kb.store.record_step(record)
    kb.step("mm-agent-a", "mm_type", a11y_ref="e2", screen="send")
    renamed = send_screen("mm-agent-b", test_ids=["send-to-address-field", "send-value-field"])
    prior = kb.engine().prior_knowledge(renamed)

    preferred = {
        s.action: s.preferredTarget for s in prior.suggestedNextActions if s.action == "type"
    }
    assert preferred, prior
    hints = [s.preferredTarget for s in prior.suggestedNextActions]
    assert {"type": "a11yHint", "value": {"role": "textbox", "name": "Amount"}} in [
        h.model_dump() for h in hints
    ]
    recipient = next(
        s
        for s in prior.suggestedNextActions
        if any(t.model_dump().get("value") == "recipient-address-input" for t in s.fallbackTargets)
    )
    assert recipient.preferredTarget.model_dump() == {
        "type": "a11yHint",
        "value": {"role": "textbox", "name": "Recipient address"},
    }


def test_targets_that_failed_twice_on_this_screen_are_to_be_avoided(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5)
    for _ in range(2):
        kb.not_found("mm-agent-b", "ens-input", "mm_type", screen="send")
    kb.step("mm-agent-b", "mm_click", test_id="once-only", ok=False, screen="send")
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-b"))
    assert [(a.target, a.frequency, a.errorCode) for a in prior.avoid] == [
        ({"testId": "ens-input"}, 2, "MM_TARGET_NOT_FOUND")
    ]


def test_no_same_screen_bonus_for_unknown_screens(kb: Knowledge) -> None:
    kb.session("mm-agent-a", hours_ago=30)
    kb.step("mm-agent-a", "mm_describe_screen", screen="unknown")
    kb.step("mm-agent-a", test_id="mystery-button", screen="unknown")
    context = ScreenContext(screen="unknown", session_id="mm-agent-b")
    prior = kb.engine().prior_knowledge(context)
    assert prior.similarSteps == []
    assert prior.avoid == []


def test_equally_good_suggestions_keep_the_order_they_were_used_in(kb: Knowledge) -> None:
    """Steps of one session weigh the same (age is the session's), so the form's fields come
    before its submit button, as the earlier agent used them."""
    kb.session("mm-agent-a", hours_ago=30, flow_tags=["send"])
    kb.step("mm-agent-a", "mm_describe_screen", screen="send")
    send_ids = [t for t, _ in SEND_IDS] + ["send-continue-button"]
    for test_id in send_ids:
        tool = "mm_click" if test_id.endswith("button") else "mm_type"
        kb.step("mm-agent-a", tool, test_id=test_id, screen="send", test_ids=send_ids)
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-b", test_ids=send_ids))
    assert [s.preferredTarget.value for s in prior.suggestedNextActions] == send_ids


def test_what_this_visit_already_did_is_not_suggested_again(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5, flow_tags=["send"])
    kb.step("mm-agent-b", test_id="coin-overview-send", screen="send", test_ids=SEND_IDS)
    kb.step("mm-agent-b", "mm_type", test_id="recipient-address-input", screen="send")
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-b"))
    targets = [s.preferredTarget.value for s in prior.suggestedNextActions]
    assert targets[0] == "send-amount-input"
    assert "recipient-address-input" not in targets


def test_a_new_visit_to_the_screen_gets_the_full_suggestions_again(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5, flow_tags=["send"])
    kb.step("mm-agent-b", test_id="coin-overview-send", screen="send", test_ids=SEND_IDS)
    kb.step("mm-agent-b", "mm_type", test_id="recipient-address-input", screen="send")
    kb.step("mm-agent-b", test_id="app-header-logo", screen="home")  # left the send screen
    kb.step("mm-agent-b", "mm_click", test_id="coin-overview-send", screen="send")
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-b"))
    targets = [s.preferredTarget.value for s in prior.suggestedNextActions]
    assert "recipient-address-input" in targets


def test_a_target_that_cannot_be_used_now_is_a_later_action(kb: Knowledge) -> None:
    kb.session("mm-agent-a", hours_ago=30, flow_tags=["send"])
    kb.step("mm-agent-a", "mm_describe_screen", screen="send", test_ids=[], a11y=SEND_A11Y)
    kb.step("mm-agent-a", "mm_type", a11y_ref="e1", screen="send")
    kb.step("mm-agent-a", "mm_type", a11y_ref="e2", screen="send")

    def names(context: ScreenContext) -> tuple[list[object], list[object]]:
        prior = kb.engine().prior_knowledge(context)
        return (
            [s.preferredTarget.value["name"] for s in prior.suggestedNextActions],
            [s.preferredTarget.value["name"] for s in prior.laterActions],
        )

    assert names(send_screen("mm-agent-b", test_ids=[])) == (["Recipient address", "Amount"], [])
    recipient_disabled = [("textbox", "Recipient address")]
    assert names(send_screen("mm-agent-b", test_ids=[], disabled=recipient_disabled)) == (
        ["Amount"],
        ["Recipient address"],
    )
