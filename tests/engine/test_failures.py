"""A query naming a failure the way people say it finds the steps that failed that way first,
above the many steps of the same action that worked, in every search mode, on a real index.

The fixture is what agents record: a confirm button clicked many times in sessions about
connecting, confirming and sending (it worked), and once it timed out; a send button clicked
often, and once it was not there; the test dapp opened often, and once its server was down.
"""

import pytest

from tests.conftest import Knowledge

A11Y = [("e1", "button", "Confirm"), ("e2", "button", "Send")]
TIMED_OUT = ("MM_WAIT_TIMEOUT", "locator.click: Timeout 5000ms exceeded.")
REFUSED = (
    "MM_NAVIGATION_FAILED",
    "Navigation failed: net::ERR_CONNECTION_REFUSED at http://localhost:8080/",
)
NOT_FOUND = ("MM_TARGET_NOT_FOUND", 'Element not found: [data-testid="eth-overview-send"]')
DISABLED = ("MM_CLICK_FAILED", "Operation failed: locator.click: Element is not enabled")
OVERLAY = '<div class="mm-modal-overlay"></div>'
COVERED = (
    "MM_CLICK_FAILED",
    f"Operation failed: locator.click: {OVERLAY} intercepts pointer events",
)
DAPP = "http://localhost:8080/"


@pytest.fixture(scope="module")
def kb(module_kb: Knowledge) -> Knowledge:
    """More steps that worked than a search reranks (`engine.meaning.RERANK_WINDOW`), each
    matching the failure queries' other words in its flow, goal, screen and target."""
    kb = module_kb
    for n in range(12):
        session = kb.session(
            f"mm-confirm-{n:02d}",
            hours_ago=2 + n,
            goal="Connect the test dapp, confirm the connection and send",
            flow_tags=["connect", "confirm", "send"],
        )
        for _ in range(3):
            kb.step(session, "mm_navigate", url=DAPP, screen="connect")
            kb.step(session, test_id="confirm-footer-button", screen="connect", a11y=A11Y)
            kb.step(session, test_id="eth-overview-send", screen="connect", a11y=A11Y)
            kb.step(session, test_id="send-continue", screen="send", a11y=A11Y)
    failing = kb.session("mm-failing", hours_ago=30, goal="Send ETH")
    kb.step(failing, test_id="confirm-footer-button", screen="connect", ok=False, error=TIMED_OUT)
    kb.step(failing, "mm_navigate", url=DAPP, screen="connect", ok=False, error=REFUSED)
    kb.step(failing, test_id="eth-overview-send", screen="connect", ok=False, error=NOT_FOUND)
    kb.step(failing, test_id="send-continue", screen="send", ok=False, error=DISABLED)
    kb.step(failing, test_id="send-continue", screen="send", ok=False, error=COVERED)
    kb.index()
    return kb


FAILED = {
    "why did the confirm click time out": "mm-failing/0001-mm_click",
    "connection refused": "mm-failing/0002-mm_navigate",
    "localhost refused to connect": "mm-failing/0002-mm_navigate",
    "send button not found error": "mm-failing/0003-mm_click",
    "the continue button was greyed out": "mm-failing/0004-mm_click",
    "something covered the continue button and intercepted my click": "mm-failing/0005-mm_click",
}


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
@pytest.mark.parametrize(("query", "failed"), FAILED.items())
def test_a_failure_named_as_people_say_it_ranks_its_failed_step_first(
    kb: Knowledge, query: str, failed: str, mode: str
) -> None:
    page = kb.search(query, mode=mode)
    assert page.results[0].stepId == failed
    assert page.results[0].ok is False


@pytest.mark.parametrize("mode", ["keyword", "hybrid"])
def test_saying_an_action_failed_ranks_its_failed_steps_first(kb: Knowledge, mode: str) -> None:
    """No kind of error named: every failed step of that action comes before its successes."""
    ids = [r.stepId for r in kb.search("why did the continue click fail", mode=mode).results]
    assert set(ids[:2]) == {"mm-failing/0004-mm_click", "mm-failing/0005-mm_click"}


def test_the_failed_step_ranks_above_every_success_of_the_same_action(kb: Knowledge) -> None:
    """The confirm clicks that worked match `confirm` and `click` in their flow, goal, screen
    and target; the one that timed out also holds `time out`, and comes before all of them."""
    ids = [r.stepId for r in kb.search("confirm click timed out").results]
    successes = [i for i in ids if i.startswith("mm-confirm-") and i.endswith("mm_click")]
    assert successes
    assert ids.index("mm-failing/0001-mm_click") < min(ids.index(i) for i in successes)


def test_a_query_naming_no_failure_still_prefers_what_worked(kb: Knowledge) -> None:
    page = kb.search("click confirm", mode="keyword")
    assert page.results[0].ok is True


def test_the_error_is_evidence_of_the_match(kb: Knowledge) -> None:
    page = kb.search("connection refused", mode="keyword")
    assert "error:MM_NAVIGATION_FAILED" in page.results[0].matchedFields
