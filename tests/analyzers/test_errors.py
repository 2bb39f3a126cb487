"""Errors read as people say them: the tools' messages and codes of each documented family are
of its kind, whatever surrounds them; a query says a failure in the same words an error is
indexed with; words that mean other things too, and identifiers, name no failure."""

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from analyzers import (
    FAILURES,
    analyze,
    error_words,
    failure_kinds,
    failures_named,
    names_a_failure,
    plain_failures,
)
from analyzers.errors import FAILED_SAYS, FAILED_WORDS

KINDS = [f.kind for f in FAILURES]
PHRASES = sorted({(f.kind, p) for f in FAILURES for p in (*f.signs, *f.says)})
NAMING = {p for _, p in PHRASES}
WORDS_ONLY = sorted({w for f in FAILURES for w in f.words} - NAMING)
CODE_PHRASES = [(k, p) for k, p in PHRASES if all(w.isalnum() for w in p.split())]

filler = st.sampled_from(["the", "button", "click", "on", "page", "swap", "after", "42", "wallet"])
around = st.lists(filler, max_size=4).map(" ".join)
case = st.sampled_from([str, str.upper, str.lower, str.title])


@pytest.mark.parametrize(
    ("code", "message", "kinds"),
    [
        # Playwright, as its actionability checks and timeouts word it
        (None, "locator.click: Timeout 5000ms exceeded.", {"timeout"}),
        (None, "TimeoutError: page.waitForSelector: Timeout 30000ms exceeded.", {"timeout"}),
        (None, "element is not visible - waiting...", {"hidden"}),
        (None, "waiting for locator('#send') to be visible", {"hidden"}),
        (None, "element is not enabled", {"disabled"}),
        (None, '<div class="overlay"></div> intercepts pointer events', {"covered"}),
        (None, "element was detached from the DOM, retrying", {"gone"}),
        (None, "Element is not attached to the DOM", {"gone"}),
        (
            None,
            "Error: Element is not an <input>, <textarea> or [contenteditable] element",
            {"not-editable"},
        ),
        (None, "Target page, context or browser has been closed", {"no-browser"}),
        # Chromium network errors: refused, and any other by its code's words
        (None, "net::ERR_CONNECTION_REFUSED at http://localhost:8080/", {"refused", "network"}),
        (None, "net::ERR_NAME_NOT_RESOLVED at https://nowhere.test/", {"network"}),
        (None, "net::ERR_CONNECTION_TIMED_OUT", {"network", "timeout"}),
        # the MetaMask browser tools' codes
        ("MM_WAIT_TIMEOUT", None, {"timeout"}),
        (
            "MM_TARGET_NOT_FOUND",
            "Unknown a11yRef: e18. Available refs: e1, e2",
            {"not-found", "gone"},
        ),
        ("MM_NAVIGATION_FAILED", None, {"navigation"}),
        ("MM_NO_ACTIVE_SESSION", "No active session. Call mm_launch first.", {"no-browser"}),
        ("MM_CLICK_FAILED", "Operation failed", set()),
    ],
)
def test_each_documented_family_is_read_as_its_kind(code, message, kinds) -> None:
    assert set(failure_kinds(code, message)) == kinds


@given(st.sampled_from(PHRASES), around, around, case)
@example(("timeout", "timed out"), "why did the confirm click", "", str)
def test_a_phrase_of_a_kind_names_it_wherever_it_stands(phrase, before, after, cased) -> None:
    kind, said = phrase
    text = f"{before} {cased(said)} {after}"
    assert kind in failures_named(text)
    assert kind in failure_kinds(None, text)


@given(st.text(max_size=60))
def test_a_query_names_the_kinds_an_error_saying_the_same_would_be(text) -> None:
    """One reading for both sides: what a query names is what an error of those words is."""
    assert failures_named(text) == failure_kinds(None, text)
    assert set(failures_named(text)) <= set(KINDS)
    assert list(failures_named(text)) == sorted(failures_named(text), key=KINDS.index)


@given(st.lists(st.sampled_from(WORDS_ONLY), min_size=1, max_size=4), around)
def test_words_that_mean_other_things_too_name_no_failure_alone(said, context) -> None:
    """`hidden`, `gone`, `overlay` are indexed with their errors, but "show hidden tokens" or
    "close the overlay" is no complaint about a failure."""
    assert failures_named(f"{context} {' '.join(said)}") == failures_named(context)


@given(st.sampled_from(PHRASES), st.sampled_from(["-", "."]), st.sampled_from(["button", "x"]))
def test_an_identifier_names_no_failure_by_its_parts(phrase, joiner, suffix) -> None:
    """`does-not-exist-button` is a testId somebody typed, not a complaint."""
    _, said = phrase
    identifier = joiner.join([*said.replace("'", "").split(), suffix])
    assert failures_named(identifier) == ()


@given(st.sampled_from(CODE_PHRASES), st.sampled_from(["MM", "ERR", "E"]), case)
def test_a_code_is_read_by_its_parts(phrase, prefix, cased) -> None:
    kind, said = phrase
    code = "_".join([prefix, *said.split()])
    assert kind in failure_kinds(cased(code), None)
    assert kind in failures_named(cased(code))


@given(st.sampled_from(KINDS))
def test_an_error_is_indexed_with_what_people_call_its_kinds(kind) -> None:
    failure = next(f for f in FAILURES if f.kind == kind)
    message = failure.signs[0]
    said = error_words(None, message)
    assert said[: len(FAILED_WORDS)] == FAILED_WORDS
    assert set(failure.words) <= set(said)
    assert set(analyze(" ".join(failure.words))) <= set(analyze(" ".join(said)))


def test_no_error_has_no_words() -> None:
    assert error_words(None, None) == ()
    assert error_words("", "") == ()
    assert failure_kinds(None, None) == ()


@pytest.mark.parametrize(
    ("query", "kinds"),
    [
        ("why did the confirm click time out", ("timeout",)),
        ("send button not found error", ("not-found",)),
        ("connection refused", ("refused",)),
        ("localhost refused to connect", ("refused",)),
        ("the continue button was greyed out", ("disabled",)),
        ("ERR_CONNECTION_REFUSED", ("refused",)),
        # the passive and the modal forms people write of the same failures
        ("the recipient field could not be found on the send page", ("not-found",)),
        ("the amount box was not found", ("not-found",)),
        ("the test page won't load", ("navigation",)),
        ("the dapp failed to load", ("navigation",)),
        ("I was unable to type into the amount", ("not-editable",)),
        # not a failure: an action, an everyday word, an identifier, a generic complaint
        ("disable the setting", ()),
        ("show hidden tokens", ()),
        ("close the overlay", ()),
        ("does-not-exist-button", ()),
        ("why did the unlock fail", ()),
    ],
)
def test_queries_name_the_failures_people_mean(query, kinds) -> None:
    assert failures_named(query) == kinds


def test_a_step_text_tells_each_kind_that_has_a_sentence_once() -> None:
    said = plain_failures("MM_NAVIGATION_FAILED", "net::ERR_CONNECTION_REFUSED")
    assert said == ["the site was not running", "the page could not be opened"]


@given(st.sampled_from(FAILED_SAYS), around, around, case)
def test_saying_something_failed_names_a_failure_whatever_the_error(said, before, after, cased):
    assert names_a_failure(f"{before} {cased(said)} {after}")


@pytest.mark.parametrize(
    ("query", "failed"),
    [
        ("why did the unlock fail", True),
        ("the swap didn't work", True),
        ("MM_CLICK_FAILED when confirming", True),
        ("clicking confirm on the transaction screen did nothing", True),
        ("nothing happened when I pressed unlock", True),
        ("I couldn't click the continue button", True),
        ("the swap page is not responding", True),
        # an error a page shows is no failed step; a word that only starts like one
        ("recipient address invalid error", False),
        ("failover network", False),
        ("send-failed-banner", False),
    ],
)
def test_a_query_says_something_failed(query, failed) -> None:
    assert names_a_failure(query) is failed
