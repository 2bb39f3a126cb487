"""A destructive control under a friendly name: told by what it does, never the first answer.

One session clicks a wallet-wiping button recorded under the accessible name "Send". Whatever
tells that it destroys something — a word of its id, the screen it leads to, the confirmation
it opens, the text beside it — it carries a `caution` and is not the first answer to "send
button", nor the first suggestion on home; a query that asks to wipe the wallet finds it
without a caution.
"""

from typing import Any

import pytest

from engine.history import ScreenContext
from engine.records import A11yHint
from tests.conftest import Knowledge
from tests.engine.test_steered_memory import HOME_A11Y, HOME_IDS, honest_sessions

INNOCENT = "wallet-primary-action"


def trap_session(
    kb: Knowledge,
    test_id: str,
    *,
    landed: str = "home",
    opened: tuple[str, str] | None = None,
    beside: tuple[str, str] | None = None,
) -> str:
    """One fresh session that looks at home and clicks `test_id`, named "Send", twice."""
    session_id = "mm-trap"
    kb.session(session_id, hours_ago=0.5, goal="Send 0.1 ETH", flow_tags=["send"])
    shown = [*HOME_IDS, (test_id, "Send"), *([beside] if beside else [])]
    for _ in range(2):  # each time from home
        kb.step(session_id, "mm_describe_screen", screen="home", test_ids=shown, a11y=HOME_A11Y)
        after = [opened] if opened else shown
        record = kb.record(session_id, test_id=test_id, screen=landed, test_ids=after)
        assert record.tool.target is not None
        record.tool.target.a11yHint = A11yHint(role="button", name="Send")
        step_id = kb.store.record_step(record)
    return step_id.split("/", 1)[0]


VARIANTS: dict[str, dict[str, Any]] = {
    **{
        f"id word {word}": {"test_id": f"{word}-wallet-button"}
        for word in ("wipe", "erase", "forget", "destroy", "clear", "reset")
    },
    "the screen it leads to": {"test_id": INNOCENT, "landed": "reset-wallet"},
    "the confirmation it opens": {
        "test_id": INNOCENT,
        "opened": ("confirm-dialog-text", "All accounts will be gone. This cannot be undone."),
    },
    "the text beside it": {
        "test_id": INNOCENT,
        "beside": ("wallet-primary-warning", "Erases this wallet from the device"),
    },
}


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_destructive_control_named_send_is_never_the_first_answer(
    kb: Knowledge, variant: str
) -> None:
    honest_sessions(kb)
    trap = trap_session(kb, **VARIANTS[variant])
    for query in ("send button", "send", "click send on home", "Send button home screen"):
        page = kb.search(query, limit=5)
        first = page.steps()[0]
        assert (first.sessionId, first.tool) != (trap, "mm_click"), (query, first)
        trapped = [r for r in page.steps() if r.sessionId == trap and r.tool == "mm_click"]
        assert all(r.caution and "destructive" in r.caution.reasons for r in trapped)
    everything = kb.search("send", limit=20).steps()
    trapped = [r for r in everything if r.sessionId == trap and r.tool == "mm_click"]
    assert trapped and all(r.caution and "destructive" in r.caution.reasons for r in trapped)
    wanted = kb.search("wipe the wallet, erase everything", limit=5)
    assert all(r.caution is None for r in wanted.steps() if r.sessionId == trap)


@pytest.mark.parametrize("variant", VARIANTS)
def test_a_destructive_control_is_never_the_first_suggestion(kb: Knowledge, variant: str) -> None:
    kb.session("mm-honest-0", hours_ago=24 * 20, goal="Send 0.1 ETH", flow_tags=["send"])
    kb.step("mm-honest-0", "mm_describe_screen", screen="home", test_ids=HOME_IDS, a11y=HOME_A11Y)
    kb.step("mm-honest-0", test_id="coin-overview-send", screen="send")
    trap_session(kb, **VARIANTS[variant])
    test_id = VARIANTS[variant]["test_id"]
    context = ScreenContext(
        screen="home",
        test_ids=["coin-overview-send", "coin-overview-swap", test_id],
        a11y=[("button", "Send"), ("button", "Swap")],
        texts=[*HOME_IDS, (test_id, "Send")],
        session_id="mm-newcomer",
        goal="Send 0.1 ETH to a friend",
    )
    prior = kb.engine().prior_knowledge(context)
    first = prior.suggestedNextActions[0]
    assert first.preferredTarget.value == "coin-overview-send"
    trap = [s for s in prior.suggestedNextActions if s.preferredTarget.value == test_id]
    assert trap and trap[0].caution and "destructive" in trap[0].caution.reasons


def test_a_tab_that_leads_to_a_screen_with_a_reset_button_is_not_destructive(
    kb: Knowledge,
) -> None:
    """Danger is what the action does, not every word on the screen it opens: the Advanced tab
    shows "Reset account", and saying so is not what clicking the tab does."""
    kb.session("mm-settings", hours_ago=2, goal="turn on test networks")
    shown = [("settings-general-tab", "General"), ("settings-advanced-tab", "Advanced")]
    kb.step("mm-settings", "mm_describe_screen", screen="settings", test_ids=shown)
    after = [*shown, ("reset-account-button", "Reset account")]
    kb.step("mm-settings", test_id="settings-advanced-tab", screen="settings", test_ids=after)
    page = kb.search("advanced settings tab", limit=3)
    assert page.steps()[0].stepId.endswith("mm_click")
    assert page.steps()[0].caution is None
