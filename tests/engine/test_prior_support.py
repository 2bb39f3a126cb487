"""priorKnowledge trusted by how often something worked: a single recording — forged, or an
honest agent's mistake — never outranks what worked in several sessions, however fresh it is
and however old they are; one suggestion per element, in the order the flow goes, and a
confidence never higher further down (the bundled sample's unlock screen)."""

from engine import KnowledgeEngine, StepRecord
from engine.history import PriorKnowledge, ScreenContext
from server.demo import SAMPLE_ROOT
from tests.conftest import Knowledge

HOME_IDS = [
    ("coin-overview-send", "Send"),
    ("coin-overview-swap", "Swap"),
    ("coin-overview-buy", "Buy & Sell"),
]
HOME_A11Y = [("e1", "button", "Send"), ("e2", "button", "Swap"), ("e3", "button", "Buy & Sell")]


def clicked(kb: Knowledge, session_id: str, test_id: str, days_ago: float) -> None:
    """A session that looked at home and clicked `test_id`; it worked."""
    kb.session(session_id, hours_ago=24 * days_ago, goal="use the wallet")
    kb.step(session_id, "mm_describe_screen", screen="home", test_ids=HOME_IDS, a11y=HOME_A11Y)
    kb.step(session_id, test_id=test_id, screen="next")


def home() -> ScreenContext:
    return ScreenContext(
        screen="home",
        test_ids=[t for t, _ in HOME_IDS],
        a11y=[(role, name) for _, role, name in HOME_A11Y],
        texts=HOME_IDS,
        session_id="mm-newcomer",
    )


def order(prior: PriorKnowledge) -> list[object]:
    return [s.preferredTarget.value for s in prior.suggestedNextActions]


def test_a_fresh_single_recording_ranks_after_what_worked_in_several_sessions(
    kb: Knowledge,
) -> None:
    for n, days in enumerate((60, 70, 80)):
        clicked(kb, f"mm-send-{n}", "coin-overview-send", days)
    for n, days in enumerate((90, 100)):
        clicked(kb, f"mm-swap-{n}", "coin-overview-swap", days)
    clicked(kb, "mm-forged", "coin-overview-buy", 0.01)  # one click, minutes ago
    prior = kb.engine().prior_knowledge(home())
    assert order(prior) == ["coin-overview-send", "coin-overview-swap", "coin-overview-buy"]
    confidences = [s.confidence for s in prior.suggestedNextActions]
    assert confidences == sorted(confidences, reverse=True)


def test_an_honest_mistake_yesterday_does_not_outrank_two_sessions_months_ago(
    kb: Knowledge,
) -> None:
    """An agent clicked Buy by mistake (it worked: the page opened) yesterday, twice in its one
    session; Send worked in two sessions months ago."""
    clicked(kb, "mm-old-0", "coin-overview-send", 120)
    clicked(kb, "mm-old-1", "coin-overview-send", 150)
    clicked(kb, "mm-mistake", "coin-overview-buy", 1)
    kb.step("mm-mistake", "mm_describe_screen", screen="home", test_ids=HOME_IDS)
    kb.step("mm-mistake", test_id="coin-overview-buy", screen="next")
    prior = kb.engine().prior_knowledge(home())
    assert order(prior)[0] == "coin-overview-send"
    first = prior.suggestedNextActions[0]
    assert first.support.sessions == 2


def test_the_sample_unlock_screen_gives_one_suggestion_per_element_in_flow_order(
    sample: KnowledgeEngine,
) -> None:
    describe = next(SAMPLE_ROOT.glob("*/steps/0002-mm_describe_screen.json"))
    observation = StepRecord.model_validate_json(describe.read_bytes()).observation
    prior = sample.prior_knowledge(ScreenContext.seen(observation, "unlock", "mm-new"))
    suggestions = prior.suggestedNextActions
    assert [(s.action, s.target) for s in suggestions] == [
        ("type", {"testId": "unlock-password"}),
        ("click", {"testId": "unlock-submit"}),
    ]
    assert {"a11yHint": {"role": "textbox", "name": "Password"}} in suggestions[0].fallbacks
    assert {"a11yHint": {"role": "button", "name": "Unlock"}} in suggestions[1].fallbacks
    assert suggestions[0].confidence >= suggestions[1].confidence
    assert all(s.support.sessions == 5 for s in suggestions)
