"""Recall links: a step that follows an offered target and works links to the memory."""

from engine.history import Offers, offered_keys, suggestion_offers, with_recalls
from engine.records import A11yHint, StepTarget
from tests.conftest import Knowledge
from tests.engine.test_prior import record_send_flow, send_screen


def test_following_a_prior_knowledge_suggestion_links_to_its_step(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5, flow_tags=["send"])
    prior = kb.engine().prior_knowledge(send_screen("mm-agent-b"))
    amount = next(
        s for s in prior.suggestedNextActions if s.preferredTarget.value == "send-amount-input"
    )
    offers = Offers()
    offers.offer("mm-agent-b", suggestion_offers(prior))

    typed = kb.record("mm-agent-b", "mm_type", test_id="send-amount-input", text="0.2")
    linked = with_recalls(typed, offers)
    assert [(link.stepId, link.via) for link in linked.recalled or []] == [
        (amount.stepId, "priorKnowledge")
    ]
    assert with_recalls(typed, offers).recalled is None  # one recall per session
    elsewhere = kb.record("mm-agent-c", "mm_type", test_id="send-amount-input", text="0.2")
    assert with_recalls(elsewhere, offers).recalled is None  # offered to another session


def test_a_target_named_by_role_and_name_matches_the_offered_element(kb: Knowledge) -> None:
    """A search row's target carries the element's role and name: clicking that element by
    a11yHint (the name in another case) follows the same advice."""
    offers = Offers()
    row_target = {"testId": "old-send", "role": "button", "name": "Send"}
    offers.offer("mm-now", [("mm-then/0003-mm_click", "search", offered_keys(row_target))])
    clicked = kb.record("mm-now")
    hint = StepTarget(a11yHint=A11yHint(role="button", name="send"))
    by_hint = clicked.model_copy(update={"tool": clicked.tool.model_copy(update={"target": hint})})
    links = with_recalls(by_hint, offers).recalled or []
    assert [link.stepId for link in links] == ["mm-then/0003-mm_click"]
