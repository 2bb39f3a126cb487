"""Errors as people say them: what a failure's code and message mean, in the words people use.

A failed step records the tools' wording — `MM_WAIT_TIMEOUT`, `locator.waitFor: Timeout 15000ms
exceeded`, `<div class="mm-modal-overlay"></div> intercepts pointer events`,
`net::ERR_CONNECTION_REFUSED` — while people ask "why did the confirm click time out", "the button
was covered", "connection refused". `FAILURES` is a small table of failure kinds, one per family of
messages of Playwright (its actionability checks and timeouts), Chromium (its `net::ERR_…` network
errors) and the MetaMask browser tools (their `MM_…` codes), each derived from what the family is
documented to mean: the phrases the tools write (`signs`), the phrases people say of it (`says`)
and the words people call it by (`words`).

The same reading serves both sides: an error, or a query, holding a sign or a phrase people say
as consecutive words is of that kind (`failure_kinds`, `failures_named`). A step's error is
indexed with its kinds and their words (`error_words`); a query naming a kind ranks the failed
steps of that kind above the rest. Only distinctive words are indexed: the words of a phrase
(`page` of "page did not load", `time` of "time out") would match questions about anything else.
Codes are read by their parts (`MM_WAIT_TIMEOUT` is `wait timeout`, `ERR_CONNECTION_REFUSED` is
`connection refused`, whatever code the tools add); other compound words are identifiers
(`does-not-exist-button`) and name no failure by their parts.
"""

from dataclasses import dataclass
from functools import lru_cache

from analyzers.text import holds_phrase, lower_chars, words

FAILED_WORDS = ("failed", "error")
"""What people say of any error, whatever its kind ("why did the unlock fail")."""
FAILED_SAYS = (
    *("fail", "fails", "failed", "failing", "failure", "failures"),
    *("didn't work", "did not work", "doesn't work", "does not work", "won't work"),
    *("wouldn't work", "would not work", "isn't working", "is not working", "not working"),
    # an action that had no effect: a click that "did nothing" failed, whatever stopped it
    *("did nothing", "does nothing", "nothing happened", "nothing happens", "no effect"),
    *("didn't respond", "did not respond", "doesn't respond", "does not respond"),
    *("not responding", "unresponsive", "went wrong", "errored", "crashed", "stuck"),
    *("can't click", "cannot click", "couldn't click", "could not click", "unable to click"),
    *("can't press", "cannot press", "couldn't press", "could not press", "unable to press"),
)
"""What people say of an action that failed, whatever the error: a query holding one asks for
the failed steps (`names_a_failure`). Not `error`, which also names what a page says (an
invalid address is an error the page shows, and the step that showed it worked)."""


@dataclass(frozen=True, slots=True)
class Failure:
    """One family of error messages and what people call it."""

    kind: str
    """Its name, as the index's `failure` field holds it (`timeout`)."""
    signs: tuple[str, ...]
    """Phrases of the tools' codes and messages that say it (`not enabled`)."""
    says: tuple[str, ...]
    """Phrases people say of it (`greyed out`, `refused to connect`): a query holding one names
    it. Not words that mean other things as well (`hidden`, `gone`, `overlay`)."""
    words: tuple[str, ...] = ()
    """The words people call it by (`disabled`, `hidden`, `gone`), indexed with its errors:
    distinctive ones only, which no other step holds in another sense."""
    plain: str = ""
    """What went wrong, as the sentence of a step's text tells it (`the button was disabled`;
    empty: the step's text tells it another way)."""


FAILURES: tuple[Failure, ...] = (
    # Playwright: an action or a wait that did not finish in time (`Timeout 5000ms exceeded`,
    # `TimeoutError`), the browser tools' `MM_WAIT_TIMEOUT`, Chromium's `ERR_TIMED_OUT`,
    # `ERR_CONNECTION_TIMED_OUT`. Whether it took too long or its element never came depends on
    # the action (`engine.index.step_texts.failure_text`).
    Failure(
        "timeout",
        ("timeout", "timed out"),
        (
            *("timeouts", "time out", "times out", "timing out", "took too long", "too slow"),
            "waited too long",
        ),
        ("timed", "timeout"),
    ),
    # The browser tools' `MM_TARGET_NOT_FOUND` (`Element not found: …`), Playwright's
    # `No element matches selector`.
    Failure(
        "not-found",
        ("not found", "unknown a11yref", "no element matches", "no elements match"),
        (
            *("can't find", "cannot find", "couldn't find", "could not find", "can't locate"),
            *("couldn't locate", "could not locate", "no such element", "does not exist"),
            *("doesn't exist", "not there", "unable to find", "unable to locate"),
            # the passive of the same: "the field could not be found"
            *("could not be found", "couldn't be found", "cannot be found", "can't be found"),
            *("wasn't found", "was not found", "isn't found", "is not found", "is missing"),
            *("was missing", "nowhere to be found"),
        ),
        ("missing",),
        "the element could not be found",
    ),
    # Playwright's `enabled` check: `element is not enabled`, `element is disabled`.
    Failure(
        "disabled",
        ("not enabled", "element is disabled"),
        ("disabled", "greyed out", "grayed out", "not clickable", "unclickable"),
        ("disabled", "greyed", "grayed", "unclickable"),
        "the button was disabled",
    ),
    # Playwright's `receives events` check: `<div …> intercepts pointer events`, `element does
    # not receive pointer events`.
    Failure(
        "covered",
        ("intercepts pointer events", "does not receive pointer events"),
        ("covered", "intercepted", "intercepts the click", "obscured", "in the way"),
        ("covered", "blocked", "overlay", "obscured", "intercepted"),
        "something was covering it",
    ),
    # Playwright's `editable` check and `fill` on a non-field: `Element is not an <input>,
    # <textarea> or [contenteditable] element`, `element is not editable`.
    Failure(
        "not-editable",
        ("not an input", "not editable", "is not an <input"),
        (
            *("not a text field", "not a text box", "not a textbox", "not an input field"),
            *("read only", "can't type", "cannot type", "can't fill", "cannot fill"),
            *("couldn't type", "could not type", "unable to type", "couldn't fill"),
            *("could not fill", "unable to fill"),
        ),
        ("editable", "textbox"),
        "it was not a text field",
    ),
    # Playwright's `visible` check: waiting `to be visible`, `element is not visible`,
    # `element is hidden`.
    Failure(
        "hidden",
        ("to be visible", "not visible", "element is hidden"),
        ("invisible", "never appeared", "never showed up", "didn't appear"),
        ("hidden", "invisible"),
    ),
    # Playwright's `attached` check: `element is not attached to the DOM`, `element was
    # detached from the DOM`; the browser tools' unknown accessibility ref, which names an
    # element of a snapshot the page no longer has.
    Failure(
        "gone",
        ("detached", "not attached", "unknown a11yref"),
        (
            *("stale element", "stale ref", "stale reference", "unknown ref", "no longer there"),
            *("no longer exists", "removed from the page"),
        ),
        ("gone", "stale", "detached", "removed"),
    ),
    # Chromium `net::ERR_CONNECTION_REFUSED` (nothing listens at that address; Chrome's page says
    # "localhost refused to connect").
    Failure(
        "refused",
        ("connection refused",),
        (
            *("refused to connect", "refused the connection", "site down", "server down"),
            *("not running", "can't connect", "cannot connect", "couldn't connect"),
            *("unreachable", "can't reach", "cannot reach", "couldn't reach", "could not reach"),
            *("unable to connect", "unable to reach"),
        ),
        ("refused", "unreachable", "offline"),
        "the site was not running",
    ),
    # Any Chromium network error (`net::ERR_NAME_NOT_RESOLVED`, `ERR_INTERNET_DISCONNECTED`,
    # `ERR_CONNECTION_RESET`, …): its code's words say which; people call them all network
    # errors (`network` alone names none in a query: the wallet's networks are another thing).
    Failure(
        "network",
        ("net err",),
        ("network error", "network failure", "network problem"),
        ("network", "offline"),
    ),
    # The browser tools' `MM_NAVIGATION_FAILED`, Playwright's `page.goto` errors.
    Failure(
        "navigation",
        ("navigation failed",),
        (
            *("page didn't load", "page did not load", "wouldn't load", "would not load"),
            *("won't load", "didn't load", "did not load", "doesn't load", "does not load"),
            *("failed to load", "couldn't load", "could not load", "can't load", "cannot load"),
            *("unable to load", "couldn't open", "could not open", "unable to open"),
        ),
        plain="the page could not be opened",
    ),
    # The browser tools' `MM_NO_ACTIVE_SESSION`; Playwright's `Target page, context or browser
    # has been closed`.
    Failure(
        "no-browser",
        ("no active session", "has been closed", "target closed", "browser closed"),
        ("not launched", "no browser", "browser not running"),
        plain="no browser was running",
    ),
)
"""The failure kinds, in the order a step's text tells them."""


def _words(text: str) -> tuple[str, ...]:
    """The words of `text`, lowercased, in order; a code (parts joined by `_`,
    `MM_WAIT_TIMEOUT`) by its parts, any other compound (`does-not-exist`, `a11yRef`) whole.
    Not stemmed: `disabled` names a failure, `disable` an action."""
    out: list[str] = []
    for word in words(text):
        parts = word.split("_") if "_" in word and word.replace("_", "").isalnum() else [word]
        out += [lower_chars(part) for part in parts if part]
    return tuple(out)


def _phrase_index() -> dict[str, tuple[tuple[tuple[str, ...], str], ...]]:
    """Per first word, the phrases (as words) that say a kind: its signs and what people say."""
    index: dict[str, list[tuple[tuple[str, ...], str]]] = {}
    for failure in FAILURES:
        for phrase in (*failure.signs, *failure.says):
            key = _words(phrase)
            if key:
                index.setdefault(key[0], []).append((key, failure.kind))
    return {first: tuple(found) for first, found in index.items()}


_PHRASES = _phrase_index()


def _kinds(said: tuple[str, ...]) -> tuple[str, ...]:
    """The kinds whose phrases `said` holds as consecutive words, in table order."""
    found = {
        kind
        for i, first in enumerate(said)
        for key, kind in _PHRASES.get(first, ())
        if said[i : i + len(key)] == key
    }
    return tuple(kind for kind in _ORDER if kind in found)


_ORDER = tuple(failure.kind for failure in FAILURES)
_BY_KIND = {failure.kind: failure for failure in FAILURES}


@lru_cache(maxsize=4_096)
def failure_kinds(code: str | None, message: str | None) -> tuple[str, ...]:
    """The kinds (`FAILURES`, in table order) an error's code and message say it is.

    >>> failure_kinds("MM_CLICK_FAILED", "locator.click: Element is not enabled")
    ('disabled',)
    """
    return _kinds(_words(f"{code or ''} {message or ''}"))


def error_words(code: str | None, message: str | None) -> tuple[str, ...]:
    """What people call an error: any error's words (`FAILED_WORDS`), then the words of each
    of its kinds (`Failure.words`). Indexed beside its code and message.

    >>> error_words("MM_NAVIGATION_FAILED", "net::ERR_CONNECTION_REFUSED at http://localhost/")
    ('failed', 'error', 'refused', 'unreachable', 'offline', 'network')
    """
    if not (code or message):
        return ()
    kinds = failure_kinds(code, message)
    return FAILED_WORDS + tuple(
        dict.fromkeys(word for kind in kinds for word in _BY_KIND[kind].words)
    )


def plain_failures(code: str | None, message: str | None) -> list[str]:
    """The sentences (`Failure.plain`) of an error's kinds, in table order."""
    return [_BY_KIND[k].plain for k in failure_kinds(code, message) if _BY_KIND[k].plain]


def failures_named(query: str) -> tuple[str, ...]:
    """The failure kinds a query names: it holds, as consecutive words, a phrase the tools
    write for one (`Timeout 30000ms exceeded`, `ERR_CONNECTION_REFUSED`) or something people
    say of it (`time out`, `greyed out`, `refused to connect`); words that mean other things
    too (`hidden`, `gone`: `Failure.words` alone) name none.

    >>> failures_named("why did the confirm click time out")
    ('timeout',)
    """
    return _kinds(_words(query))


def names_a_failure(query: str) -> bool:
    """Whether a query says that something failed (`FAILED_SAYS`, "why did the unlock fail"),
    whatever the error: its failed steps rank above those that worked.

    >>> names_a_failure("why did the unlock fail"), names_a_failure("invalid address error")
    (True, False)
    """
    return holds_phrase(_words(query), _FAILED_KEYS)


_FAILED_KEYS = tuple(_words(phrase) for phrase in FAILED_SAYS)
