"""An old testId leads to the one that works now: searching it answers, first, the steps that
worked with its successor (one per screen where one old id became several), with the evidence
`renamedTo:<new id> (since <day>)`; the old failures come after.

The renames are the nineteen of MetaMask's extension UI that the evaluation vocabulary records
(new testId <- old testId, on the screen where each happened; the visible names are the UI's
before and after). Most are silent, as agents met them: sessions simply used the new id once
it appeared on the screen (the same visible name, or the same parts of the id, tell which old
id it replaced); a few went through a failed attempt on the old id and a retry.
"""

from dataclasses import dataclass

import pytest

from engine import SearchPage, StepSummary
from tests.conftest import Knowledge


@dataclass(frozen=True)
class Element:
    test_id: str
    text: str
    """The testId's visible text ("" for a text field)."""
    role: str
    name: str
    """The accessibility node of the element (role and name)."""
    acted: str | None = "mm_click"
    """How agents use it (None: only shown, never acted on)."""


def field(test_id: str, name: str) -> Element:
    return Element(test_id, "", "textbox", name, "mm_type")


def button(test_id: str, text: str) -> Element:
    return Element(test_id, text, "button", text)


STABLE = {
    "home": Element("account-menu-icon", "Account 1", "button", "Account 1", None),
    "send": Element("send-page-back", "Back", "button", "Back", None),
    "confirm-transaction": Element("edit-gas-fee-icon", "Edit gas fee", "button", "Edit", None),
    "connect": Element("connect-page-title", "Connect", "heading", "Connect", None),
    "swap": Element("swap-page-title", "Swap", "heading", "Swap", None),
    "onboarding-welcome": Element("onboarding-create-wallet", "Create", "button", "Create", None),
    "onboarding-create-password": Element("create-password-title", "", "heading", "Password", None),
    "onboarding-import": Element("import-srp-title", "", "heading", "Import a wallet", None),
}
"""One element per screen that never changed (the screen is recognisable across the change)."""

RENAMED: dict[str, tuple[list[Element], list[Element]]] = {
    "home": (
        [
            Element("eth-overview__primary-currency", "25 ETH", "", "", None),
            button("token-overview-button-swap", "Swap"),
            button("eth-overview-bridge", "Bridge"),
            button("eth-overview-send", "Send"),
        ],
        [
            Element("coin-overview__primary-currency", "25 ETH", "", "", None),
            button("coin-overview-swap", "Swap"),
            button("coin-overview-bridge", "Bridge"),
            button("coin-overview-send", "Send"),
        ],
    ),
    "send": (
        [
            field("ens-input", "Search, public address (0x), or ENS"),
            field("currency-input", "Amount"),
            button("page-container-footer-next", "Next"),
        ],
        [
            field("recipient-address-input", "Recipient address"),
            field("send-amount-input", "Amount"),
            button("send-continue-button", "Continue"),
        ],
    ),
    "confirm-transaction": (
        [
            button("page-container-footer-cancel", "Reject"),
            button("page-container-footer-next", "Confirm"),
        ],
        [
            button("confirm-footer-cancel-button", "Cancel"),
            button("confirm-footer-button", "Confirm"),
        ],
    ),
    "connect": (
        [
            button("page-container-footer-cancel", "Cancel"),
            button("page-container-footer-next", "Next"),
        ],
        [button("cancel-btn", "Cancel"), button("confirm-btn", "Connect")],
    ),
    "swap": (
        [
            Element("prepare-swap-page-swap-from", "ETH", "button", "Swap from ETH", None),
            field("prepare-swap-page-from-token-amount", "Enter amount"),
            button("prepare-swap-page-swap-to", "Swap to"),
        ],
        [
            Element("bridge-source-button", "ETH", "button", "ETH", None),
            field("from-amount", "From amount"),
            button("bridge-destination-button", "Select token"),
        ],
    ),
    "onboarding-welcome": (
        [
            Element(
                "onboarding-terms-checkbox", "", "checkbox", "I agree to MetaMask's Terms of use"
            )
        ],
        [
            Element("terms-of-use-checkbox", "", "checkbox", "I agree to the Terms of Use"),
            button("terms-of-use-scroll-button", "Scroll down"),
        ],
    ),
    "onboarding-create-password": (
        [
            field("create-password-new", "New password (8 characters min)"),
            field("create-password-confirm", "Confirm password"),
            button("create-password-import", "Import my wallet"),
        ],
        [
            field("create-password-new-input", "New password (8 characters min)"),
            field("create-password-confirm-input", "Confirm password"),
            button("create-password-submit", "Create password"),
        ],
    ),
    "onboarding-import": (
        [field("import-srp__srp-word-0", "1.")],
        [field("srp-input-import__srp-note", "Enter your Secret Recovery Phrase")],
    ),
}

RENAMES = [
    ("coin-overview-send", "eth-overview-send"),
    ("coin-overview-swap", "token-overview-button-swap"),
    ("coin-overview-bridge", "eth-overview-bridge"),
    ("coin-overview__primary-currency", "eth-overview__primary-currency"),
    ("recipient-address-input", "ens-input"),
    ("send-amount-input", "currency-input"),
    ("send-continue-button", "page-container-footer-next"),
    ("confirm-footer-button", "page-container-footer-next"),
    ("confirm-footer-cancel-button", "page-container-footer-cancel"),
    ("confirm-btn", "page-container-footer-next"),
    ("cancel-btn", "page-container-footer-cancel"),
    ("bridge-source-button", "prepare-swap-page-swap-from"),
    ("bridge-destination-button", "prepare-swap-page-swap-to"),
    ("from-amount", "prepare-swap-page-from-token-amount"),
    ("terms-of-use-checkbox", "onboarding-terms-checkbox"),
    ("create-password-new-input", "create-password-new"),
    ("create-password-confirm-input", "create-password-confirm"),
    ("create-password-submit", "create-password-import"),
    ("srp-input-import__srp-note", "import-srp__srp-word-0"),
]
"""The evaluation vocabulary's renames (new testId, old testId)."""

RETRIED = {
    "ens-input",
    "currency-input",
    "page-container-footer-next",
    "page-container-footer-cancel",
    "prepare-swap-page-swap-to",
}
"""Old ids an agent with a stale memory tried after the change (it waited for the element until
the wait timed out), then retried on the new one: the renames whose old and new ids share no
part and whose element changed its name too (`Next` → `Continue`) leave only that evidence."""
TIMEOUT = "locator.waitFor: Timeout 15000ms exceeded.\nCall log:\n  - waiting for locator"


def look(kb: Knowledge, session_id: str, screen: str, ui: list[Element]) -> None:
    kb.step(
        session_id,
        "mm_describe_screen",
        screen=screen,
        test_ids=[(e.test_id, e.text) for e in ui],
        a11y=[(f"e{i + 1}", e.role, e.name) for i, e in enumerate(ui) if e.name],
    )


def use(kb: Knowledge, session_id: str, screen: str, ui: list[Element]) -> None:
    """Look at the screen twice, then act on each element agents act on."""
    look(kb, session_id, screen, ui)
    look(kb, session_id, screen, ui)
    for element in ui:
        if element.acted == "mm_type":
            kb.step(session_id, "mm_type", test_id=element.test_id, text="x", screen=screen)
        elif element.acted:
            kb.step(session_id, test_id=element.test_id, screen=screen)


@pytest.fixture(scope="module")
def renamed(module_kb: Knowledge) -> Knowledge:
    """Per screen: two sessions on the old UI (days ago), then, after the change, a session
    with a stale memory trying old ids where `RETRIED` says so, and two on the new UI."""
    kb = module_kb
    for number, (screen, (old, new)) in enumerate(RENAMED.items()):
        before = [STABLE[screen], *old]
        after = [STABLE[screen], *new]
        for age in (300, 250):
            session = kb.session(f"mm-old-{number}-{age}", hours_ago=age + number)
            use(kb, session, screen, before)
        stale = kb.session(f"mm-stale-{number}", hours_ago=100 + number)
        look(kb, stale, screen, after)
        for gone, now in zip(old, new, strict=False):  # a new UI may hold more
            if gone.test_id in RETRIED and gone.acted:
                error = ("MM_WAIT_TIMEOUT", f"{TIMEOUT}('[data-testid=\"{gone.test_id}\"]')")
                kb.step(
                    stale, gone.acted, test_id=gone.test_id, screen=screen, ok=False, error=error
                )
                look(kb, stale, screen, after)
                kb.step(stale, now.acted or "mm_click", test_id=now.test_id, screen=screen)
        for age in (50, 20):
            session = kb.session(f"mm-new-{number}-{age}", hours_ago=age + number)
            use(kb, session, screen, after)
    kb.engine()
    return kb


def works_with(result: StepSummary, test_id: str, acted: bool) -> bool:
    """The step worked with `test_id`: acted on it, or (an element nobody acts on) showed it."""
    if not result.ok:
        return False
    if acted:
        return (result.target or {}).get("testId") == test_id
    return f"renamedTo:{test_id}" in " ".join(result.matchedFields or [])


ACTED = {e.test_id for _, new in RENAMED.values() for e in new if e.acted}


@pytest.mark.parametrize(("new", "old"), RENAMES, ids=[f"{o}->{n}" for n, o in RENAMES])
def test_the_old_testid_leads_to_a_working_successor_in_the_top_3(
    renamed: Knowledge, new: str, old: str
) -> None:
    page: SearchPage = renamed.search(old, limit=10)
    top = page.steps()[:3]
    leads = [r for r in top if works_with(r, new, new in ACTED)]
    assert leads, [(r.stepId, r.ok, r.target, r.matchedFields) for r in top]
    assert any(f.startswith(f"renamedTo:{new} (since ") for f in leads[0].matchedFields or [])


def test_the_old_failures_come_after_the_successors(renamed: Knowledge) -> None:
    page = renamed.search("ens-input", limit=20)
    steps = page.steps()
    first_failure = next(i for i, r in enumerate(steps) if not r.ok)
    first_success = next(i for i, r in enumerate(steps) if r.ok)
    assert first_success < first_failure
    failed = steps[first_failure]
    assert (failed.target or {}).get("testId") == "ens-input"
    assert "renamedTo:recipient-address-input" in " ".join(failed.matchedFields or [])


def test_a_silent_rename_of_a_nameless_field_is_detected(renamed: Knowledge) -> None:
    """Nobody failed on `create-password-new` or `onboarding-terms-checkbox`: sessions simply
    used the new field (the same parts of the id tell which one replaced which)."""
    by = {
        entry.supersededBy.target
        for session in renamed.store.session_ids()
        if session.startswith("mm-old-")
        for entry in renamed.store.read_decisions(session)[0].values()
        if entry.supersededBy
    }
    assert {"testId:create-password-new-input", "testId:terms-of-use-checkbox"} <= by
