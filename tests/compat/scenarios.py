"""The sessions the compatibility suite writes in both formats: a wallet's screens and flows."""

from datetime import timedelta

from tests.compat.mm_format import Act, Node, Screen, Session
from tests.conftest import FIXED_NOW

APP = "chrome-extension://hebhblbkkdabgoldnojllkipeoacjioc/home.html"
HOME = Screen(
    "home",
    f"{APP}#/",
    [("coin-overview-send", "Send"), ("coin-overview-swap", "Swap"), ("account-menu-icon", "")],
    [
        Node("e1", "button", "Send", "coin-overview-send"),
        Node("e2", "button", "Swap", "coin-overview-swap"),
        Node("e3", "button", "Account options"),
        Node("e4", "heading", "Tokens"),
    ],
)
SEND = Screen(
    "send",
    f"{APP}#/send",
    [
        ("recipient-address-input", ""),
        ("send-amount-input", ""),
        ("send-continue-button", "Continue"),
    ],
    [
        Node("e1", "textbox", "Recipient address"),
        Node("e2", "textbox", "Amount"),
        Node("e3", "button", "Continue", "send-continue-button"),
    ],
)
CONFIRM = Screen(
    "confirm-transaction",
    f"{APP}#/confirm-transaction",
    [("confirm-footer-button", "Confirm"), ("confirm-footer-cancel-button", "Cancel")],
    [
        Node("e1", "button", "Confirm"),
        Node("e2", "button", "Cancel"),
        Node("e3", "heading", "Sending ETH"),
    ],
)
SWAP = Screen(
    "swap",
    f"{APP}#/swaps/prepare-swap-page",
    [("prepare-swap-page-from-token", "ETH"), ("prepare-swap-page-swap-to", "Select token")],
    [
        Node("e1", "button", "ETH"),
        Node("e2", "button", "Select token"),
        Node("e3", "heading", "Swap"),
    ],
)
RECIPIENT = "0x2f318C334780961FB129D2a6c30D0763d9a5C970"


def created(hours_ago: float) -> object:
    return FIXED_NOW - timedelta(hours=hours_ago)


SEND_ACTS = (
    Act("click", test_id="coin-overview-send"),
    Act("type", test_id="recipient-address-input", text=RECIPIENT),
    Act("type", test_id="send-amount-input", text="0.1"),
)
SWAP_ACTS = (
    Act("navigate", args={"screen": "home"}),
    Act("wait_for", test_id="coin-overview-swap"),
    Act("click", test_id="coin-overview-swap"),
)


def _send_session(session_id: str, hours_ago: float, meta: dict[str, object]) -> Session:
    """A send session that launched and looked at home."""
    session = Session(
        session_id,
        FIXED_NOW - timedelta(hours=hours_ago),
        goal="Send 0.1 ETH to another account",
        flow_tags=["send"],
        **meta,  # type: ignore[arg-type]
    )
    session.step(Act("launch", args={"stateMode": "default"}), HOME)
    return session.step(Act("describe_screen"), HOME)


def send_flow(session_id: str, *, hours_ago: float = 30.0, **meta: object) -> Session:
    """home -> send (recipient, amount) -> confirm -> home, every step on its own."""
    session = _send_session(session_id, hours_ago, meta)
    session.step(Act("click", test_id="coin-overview-send"), SEND)
    session.step(Act("type", test_id="recipient-address-input", text=RECIPIENT), SEND)
    session.step(Act("type", test_id="send-amount-input", text="0.1"), SEND)
    session.step(Act("click", test_id="send-continue-button"), CONFIRM)
    return session.step(Act("click", test_id="confirm-footer-button"), HOME)


def batched_send_flow(session_id: str, *, hours_ago: float = 30.0, **meta: object) -> Session:
    """The send flow with the form filled in one `run_steps` batch (home -> send), then the
    same clicks on their own as `send_flow`."""
    session = _send_session(session_id, hours_ago, meta)
    session.batch(SEND_ACTS, SEND)
    session.step(Act("click", test_id="send-continue-button"), CONFIRM)
    return session.step(Act("click", test_id="confirm-footer-button"), HOME)
