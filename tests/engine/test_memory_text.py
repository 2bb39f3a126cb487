"""The texts steps are embedded as: what people call things, not selector syntax or blanks."""

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from engine.index import (
    OBSERVING_ACTIONS,
    StepPayload,
    is_observation_text,
    names_an_observation,
    selector_words,
    session_text,
    step_text,
    words,
)
from engine.records import KNOWN_ACTIONS

WALLET = "chrome-extension://abc/home.html#/send"


def payload(tool: str, target: dict[str, Any] | None = None, **fields: Any) -> StepPayload:
    base: dict[str, Any] = {
        "tool": tool,
        "screen": "unknown",
        "onScreen": "unknown",
        "url": WALLET,
        "target": target,
        "labels": [],
        "ok": True,
        "error": None,
        "timestamp": "2026-01-15T12:00:00.000Z",
        "goal": None,
        "flowTags": [],
        "tags": [],
        "branch": None,
        "a11y": [],
    }
    step: StepPayload = base | fields  # type: ignore[assignment]
    return step


def test_selectors_are_read_as_the_words_they_name() -> None:
    assert selector_words('[data-testid="unlock-password"]') == "unlock password"
    assert selector_words('button:has-text("Unlock")') == "button Unlock"
    assert selector_words("#connectButton") == "connect button"
    assert selector_words('input[placeholder="Paste address"]') == "input Paste address"
    assert selector_words('[data-testid^="bridge-asset--"]') == "bridge asset"


@given(st.from_regex(r"[a-z]{1,8}(-[a-z0-9]{1,8}){0,4}", fullmatch=True))
def test_a_testid_selector_says_what_the_testid_says(test_id: str) -> None:
    assert selector_words(f'[data-testid="{test_id}"]') == words(test_id)


def test_a_click_on_a_web_page_says_where_it_was() -> None:
    step = payload("mm_click", {"role": "button", "name": "Connect"}, url="http://localhost:8080/")
    assert step_text(step) == 'click button "Connect" on the web page localhost'


def test_an_action_says_its_screen_and_where_it_led() -> None:
    step = payload("mm_click", {"testId": "coin-overview-send"}, onScreen="home", screen="send")
    assert (
        step_text(step)
        == "click (coin overview send) on the home screen leading to the send screen"
    )


def test_a_navigation_says_where_it_went_and_from_where() -> None:
    step = payload("mm_navigate", onScreen="home", screen="settings")
    assert step_text(step) == "go to the settings screen from the home screen"
    assert (
        step_text(payload("mm_navigate", onScreen="home", screen="home")) == "go to the home screen"
    )
    to_dapp = payload("mm_navigate", onScreen="home", screen="unknown")
    assert (
        step_text(to_dapp, "http://localhost:8080/")
        == "go to the web page localhost from the home screen"
    )


def test_a_web_page_is_called_by_its_first_heading() -> None:
    """People call a site by its title ("the E2E Test Dapp"), not its host: a page showing a
    heading is named by the first one, on every kind of step there."""
    seen = [["button", "Connect"], ["heading", "E2E Test Dapp"], ["heading", "Send Eth"]]
    to_dapp = payload("mm_navigate", onScreen="home", screen="unknown", a11y=seen)
    assert (
        step_text(to_dapp, "http://localhost:8080/")
        == 'go to the web page "E2E Test Dapp" at localhost from the home screen'
    )
    click = payload("mm_click", {"testId": "sendButton"}, url="http://localhost:8080/", a11y=seen)
    assert step_text(click) == 'click (send button) on the web page "E2E Test Dapp" at localhost'
    looked = payload("mm_describe_screen", url="http://localhost:8080/", a11y=seen)
    assert (
        step_text(looked, "http://localhost:8080/")
        == 'look at the web page "E2E Test Dapp" at localhost'
    )


def test_a_launch_says_it_starts_a_browser_with_the_wallet() -> None:
    """`mm_launch` starts a browser with the wallet extension loaded: what agents call it
    ("start the browser with the extension"), which `launch the wallet` alone did not say."""
    step = payload("mm_launch", onScreen="unlock", screen="unlock")
    assert step_text(step) == ("launch the browser with the wallet extension on the unlock screen")


def test_a_navigation_to_a_page_without_a_name_or_web_address_says_so() -> None:
    """It used to read `go to from the home screen`: a sentence about nothing, close to any
    query that mentions the home screen."""
    step = payload("mm_navigate", onScreen="home", screen="unknown")
    assert step_text(step, WALLET) == "go to another page from the home screen"
    assert step_text(step) == "go to another page from the home screen"


def test_an_observing_step_names_what_it_observed() -> None:
    assert step_text(payload("mm_describe_screen", screen="send")) == "look at the send screen"
    looked = payload("mm_get_state", onScreen="notification", screen="connect")
    assert step_text(looked) == "check the state of the connect screen"
    dapp = payload("mm_accessibility_snapshot", url="http://localhost:8080/")
    assert (
        step_text(dapp, "http://localhost:8080/")
        == "read the accessibility tree of the web page localhost"
    )
    assert step_text(payload("mm_list_testids")) == "list the elements of the page"


def test_a_failed_step_says_what_went_wrong_in_plain_words() -> None:
    """People say `it timed out` or `the site was not running`, not Playwright's wording; the
    call log after the message names selectors, not what happened. A click that timed out
    waited for its element: the element never appeared."""
    waited = payload(
        "mm_wait_for",
        {"testId": "bridge-cta-button"},
        onScreen="swap",
        screen="swap",
        ok=False,
        error={
            "code": "MM_WAIT_TIMEOUT",
            "message": "locator.waitFor: Timeout 15000ms exceeded.\nCall log:\n  - waiting for x",
        },
    )
    assert step_text(waited) == (
        "wait for (bridge cta button) on the swap screen. Failed: it took too long and timed"
        " out: locator.waitFor: Timeout 15000ms exceeded."
    )
    refused = "Navigation failed: net::ERR_CONNECTION_REFUSED at http://localhost:8080/"
    navigated = payload(
        "mm_navigate",
        onScreen="home",
        screen="home",
        ok=False,
        error={"code": "MM_NAVIGATION_FAILED", "message": refused},
    )
    assert step_text(navigated, WALLET) == (
        "go to another page from the home screen. Failed: the site was not running, the page"
        f" could not be opened: {refused}"
    )
    clicked = payload(
        "mm_click",
        {"testId": "send-button"},
        ok=False,
        error={"code": "MM_WAIT_TIMEOUT", "message": "locator.waitFor: Timeout 15000ms exceeded."},
    )
    assert step_text(clicked) == (
        "click (send button). Failed: the element never appeared:"
        " locator.waitFor: Timeout 15000ms exceeded."
    )
    unknown = payload("mm_click", ok=False, error={"code": "MM_SOMETHING_ODD", "message": ""})
    assert step_text(unknown) == "click. Failed: mm something odd"


def test_an_unknown_ref_is_not_named_in_the_text() -> None:
    """Ref ids mean nothing out of their page: two clicks on unknown refs of one screen are one
    text (one vector), whatever refs the page listed."""
    texts = {
        step_text(
            payload(
                "mm_click",
                onScreen="bridge",
                screen="bridge",
                ok=False,
                error={"code": "MM_TARGET_NOT_FOUND", "message": message},
            )
        )
        for message in (
            "Unknown a11yRef: e18. Available refs: e1, e2, e3, e4",
            "Unknown a11yRef: e9. Available refs: e1, e2",
        )
    }
    assert texts == {
        "click on the bridge screen. Failed: the element could not be found: Unknown a11yRef"
    }


def test_a_step_says_the_warning_the_page_showed() -> None:
    """`Insufficient funds` is the outcome of typing the amount: the action alone does not say."""
    step = payload(
        "mm_type",
        {"testId": "send-amount-input"},
        onScreen="send",
        screen="send",
        a11y=[["button", "Max"], ["alert", "Insufficient funds"], ["status", "Loading"]],
    )
    assert step_text(step) == (
        'type into (send amount input) on the send screen, showing "Insufficient funds"'
    )


TARGETS = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "role": st.sampled_from(["button", "textbox", "link"]),
            "name": st.text(max_size=12),
            "testId": st.from_regex(r"[a-z]{1,8}(-[a-z]{1,8}){0,2}", fullmatch=True),
        },
    ),
)
SCREENS = st.sampled_from(["unknown", "home", "send", "unlock", "settings"])


@given(st.sampled_from(KNOWN_ACTIONS), TARGETS, SCREENS, SCREENS, st.booleans())
@example("accessibility_snapshot", {"name": ""}, "unknown", "unknown", False)  # hypothesis found it
def test_only_an_observing_step_has_an_observation_text(
    action: str, target: dict[str, Any] | None, acted_on: str, landed: str, failed: bool
) -> None:
    """The semantic leg weighs observations by their text
    (`engine.meaning.semantic_leg.text_weights`): every observing tool's text is recognised,
    whatever it observed, and no action's is."""
    error = {"code": "MM_TARGET_NOT_FOUND", "message": "look at this"} if failed else None
    step = payload(f"mm_{action}", target, onScreen=acted_on, screen=landed, error=error)
    assert is_observation_text(step_text(step)) == (action in OBSERVING_ACTIONS)


def test_a_session_text_is_its_goal_and_flows_not_how_the_run_was_filed() -> None:
    step = payload(
        "mm_click",
        goal="Send 0.1 ETH to another account",
        flowTags=["send", "tx-confirmation"],
        tags=["smoke", "pr-31842", "agent:claude"],
    )
    assert session_text(step) == "Send 0.1 ETH to another account (send, tx confirmation)"
    assert session_text(payload("mm_click", flowTags=["swap"], tags=["nightly"])) == "swap"
    assert session_text(payload("mm_click", tags=["nightly"])) == ""


def test_a_click_on_cancel_or_reject_says_it_declined() -> None:
    """`say no to the signature` is near `declining the request`, not near a bare `Cancel`
    that every confirmation screen has."""
    cancel = payload("mm_click", {"role": "button", "name": "Cancel"}, onScreen="confirm-signature")
    assert step_text(cancel) == (
        'click button "Cancel" on the confirm signature screen, declining the request'
    )
    by_test_id = payload("mm_click", {"testId": "page-container-footer-cancel"})
    assert step_text(by_test_id).endswith(", declining the request")
    assert "declining" not in step_text(payload("mm_click", {"name": "Cancellation policy"}))
    assert "declining" not in step_text(payload("mm_wait_for", {"name": "Cancel"}))


@pytest.mark.parametrize(
    ("app_words", "observes"),
    [
        ("look at", True),
        ("take a screenshot", True),  # the opening `take a screenshot of`, whole words
        ("read the accessibility tree of", True),
        ("describe screen", True),  # the tool's words
        ("list testids", True),
        ("look", True),
        ("lo", False),  # part of a word is no word
        ("send", False),
        ("accessibility", False),  # a word of the opening, not its start
        ("ETH", False),
    ],
)
def test_app_words_naming_an_observation(app_words: str, observes: bool) -> None:
    assert names_an_observation(app_words) is observes
