"""Acceptance: agents drive real headless Chromium through `knowhow serve` (stdio, real MCP
clients) on the demo wallet, and a later agent reuses what an earlier one learned.

Agent A sends 0.1 ETH (tagged `send`) and exits. Agent B, a new server process, finds A's steps
by searching "transfer tokens", and on the send screen `mm_describe_screen` suggests A's
recipient and amount testIds first; following the suggestions completes the transfer. Against
the renamed variant the same knowledge points at the right elements by role and name, and the
old testIds, once they failed twice, are listed in `avoid`.
"""

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import orjson
import pytest

from server.demo import demo_app
from tests.server.browser_helpers import (
    DEMO_RULES,
    FAIL_FAST_MS,
    PASSWORD,
    RECIPIENT,
    as_target,
    balance,
    failure,
    needs_chromium,
    preferred,
    unlock,
)
from tests.server.mcp_helpers import eventually, ok, stdio_agent

pytestmark = [pytest.mark.browser, pytest.mark.anyio, needs_chromium]

RULES = ("--screen-rules", str(DEMO_RULES))
TEXT_FOR = {"recipient-address-input": RECIPIENT, "send-amount-input": "0.1"}
HINT_TEXT = {"Recipient address": RECIPIENT, "Amount": "0.1"}


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    with demo_app() as url:
        yield url


async def agent_a(root: Path, index: Path, log: Path, url: str) -> str:
    """Unlock, send 0.1 ETH by testIds, confirm; describing each new screen on the way."""
    async with stdio_agent(root, index, log, *RULES) as a:
        launched = await ok(
            a,
            "mm_launch",
            {
                "url": url,
                "goal": "Send 0.1 ETH to a friend",
                "flowTags": ["send"],
                "tags": ["demo"],
            },
        )
        await unlock(a)
        await ok(a, "mm_describe_screen", {})
        await ok(a, "mm_click", {"testId": "coin-overview-send"})
        await ok(a, "mm_describe_screen", {})
        await ok(a, "mm_type", {"testId": "recipient-address-input", "text": RECIPIENT})
        await ok(a, "mm_type", {"testId": "send-amount-input", "text": "0.1"})
        await ok(a, "mm_click", {"testId": "send-continue-button"})
        confirm = await ok(a, "mm_describe_screen", {})
        assert confirm["state"]["currentScreen"] == "confirm-transaction"
        await ok(a, "mm_click", {"testId": "confirm-footer-button"})
        assert await balance(a) == "9.9 ETH"
        await ok(a, "mm_cleanup", {})
    return str(launched["sessionId"])


@pytest.fixture(scope="module")
def recorded_a(tmp_path_factory: pytest.TempPathFactory, app_url: str) -> tuple[Path, str]:
    """A's knowledge root (each test copies it, so no test sees another's steps)."""
    base = tmp_path_factory.mktemp("agent-a")
    root = base / "llm-knowledge"
    session = anyio.run(agent_a, root, base / "index", base / "server.log", app_url)
    return root, session


@pytest.fixture
def root_with_a(recorded_a: tuple[Path, str], tmp_path: Path) -> Path:
    root = tmp_path / "llm-knowledge"
    shutil.copytree(recorded_a[0], root)
    return root


def steps_of(root: Path, session: str) -> list[dict[str, Any]]:
    return [orjson.loads(p.read_bytes()) for p in sorted((root / session / "steps").iterdir())]


def test_agent_a_recorded_every_call_with_what_survives_a_rename(
    recorded_a: tuple[Path, str],
) -> None:
    root, session = recorded_a
    meta = orjson.loads((root / session / "session.json").read_bytes())
    assert meta["flowTags"] == ["send"] and meta["goal"] == "Send 0.1 ETH to a friend"
    assert meta["git"]["commit"] and meta["launch"]["url"].startswith("http://127.0.0.1:")
    steps = steps_of(root, session)
    tools = [s["tool"]["name"] for s in steps]
    assert tools[:3] == ["mm_launch", "mm_type", "mm_click"] and tools[-1] == "mm_cleanup"
    assert all(s["outcome"]["ok"] for s in steps)

    password = steps[1]["tool"]
    assert password["input"]["text"] == "[REDACTED]" and password["textRedacted"] is True
    assert password["textLength"] == len(PASSWORD)
    for path in (root / session / "steps").iterdir():
        assert PASSWORD.encode() not in path.read_bytes(), path

    typed = {s["tool"]["target"]["testId"]: s for s in steps if s["tool"]["name"] == "mm_type"}
    assert typed["recipient-address-input"]["tool"]["target"]["a11yHint"] == {
        "role": "textbox",
        "name": "Recipient address",
    }
    assert typed["recipient-address-input"]["tool"]["input"]["text"] == RECIPIENT
    confirm = next(
        s for s in steps if s["tool"].get("target", {}).get("testId", "").startswith("confirm-")
    )
    assert "confirmation" in confirm["labels"]
    assert confirm["tool"]["target"]["a11yHint"] == {"role": "button", "name": "Confirm"}

    describes = [s for s in steps if s["tool"]["name"] == "mm_describe_screen"]
    assert [d["observation"]["state"]["currentScreen"] for d in describes] == [
        "home",
        "send",
        "confirm-transaction",
    ]
    for describe in describes:
        observation = describe["observation"]
        assert observation["testIds"] and observation["a11y"]["nodes"]
        assert observation["priorKnowledge"]["schemaVersion"] == 1
        assert observation["a11y"]["nodes"][0]["ref"] == "e1"
    # Actions that worked record the state after them; the click on Send landed on `send`.
    click_send = steps[tools.index("mm_click", 3)]
    assert click_send["observation"]["state"]["currentScreen"] == "send"
    assert click_send["labels"] == ["interaction"]


async def test_agent_b_follows_the_suggestions_of_agent_a(
    recorded_a: tuple[Path, str], root_with_a: Path, tmp_path: Path, app_url: str
) -> None:
    _, session_a = recorded_a
    async with stdio_agent(root_with_a, tmp_path / "index", tmp_path / "b.log", *RULES) as b:
        found = await ok(b, "mm_knowledge_search", {"query": "transfer tokens"})
        assert found["results"], found
        top = found["results"][:5]
        assert {r["sessionId"] for r in top} == {session_a}, top
        assert top[0]["screen"] in ("send", "confirm-transaction"), top[0]

        await ok(b, "mm_launch", {"url": app_url, "flowTags": ["send"], "goal": "Pay 0.1 ETH"})
        await unlock(b)
        home = await ok(b, "mm_describe_screen", {})
        assert preferred(home, "click")[0] == {"type": "testId", "value": "coin-overview-send"}
        await ok(b, "mm_click", as_target(preferred(home, "click")[0]))

        send = await ok(b, "mm_describe_screen", {})
        assert send["state"]["currentScreen"] == "send"
        first_two = preferred(send)[:2]
        assert {(t["type"], t["value"]) for t in first_two} == {
            ("testId", "recipient-address-input"),
            ("testId", "send-amount-input"),
        }, first_two
        for target in first_two:
            await ok(b, "mm_type", {**as_target(target), "text": TEXT_FOR[target["value"]]})

        filled = await ok(b, "mm_describe_screen", {})
        continue_ = preferred(filled, "click")[0]
        assert continue_ == {"type": "testId", "value": "send-continue-button"}
        moved = await ok(b, "mm_click", as_target(continue_))
        assert moved["state"]["currentScreen"] == "confirm-transaction"

        confirm = await ok(b, "mm_describe_screen", {})
        assert preferred(confirm, "click")[0] == {
            "type": "testId",
            "value": "confirm-footer-button",
        }
        await ok(b, "mm_click", as_target(preferred(confirm, "click")[0]))
        assert await balance(b) == "9.9 ETH"


async def test_renamed_testids_are_followed_by_role_and_name_and_then_avoided(
    root_with_a: Path, tmp_path: Path, app_url: str
) -> None:
    async with stdio_agent(root_with_a, tmp_path / "index", tmp_path / "c.log", *RULES) as c:
        await ok(c, "mm_launch", {"url": app_url + "?variant=renamed", "flowTags": ["send"]})
        await unlock(c)
        home = await ok(c, "mm_describe_screen", {})
        send_button = preferred(home, "click")[0]
        assert send_button == {"type": "a11yHint", "value": {"role": "button", "name": "Send"}}
        await ok(c, "mm_click", as_target(send_button))

        send = await ok(c, "mm_describe_screen", {})
        hints = [t for t in preferred(send)[:2] if t["type"] == "a11yHint"]
        assert {t["value"]["name"] for t in hints} == {"Recipient address", "Amount"}, send

        # The remembered testId is gone: it fails, fails again, and is then to be avoided.
        for _ in range(2):
            error = await failure(
                c,
                "mm_type",
                {"testId": "recipient-address-input", "text": "x", "timeoutMs": FAIL_FAST_MS},
            )
            assert error["code"] == "MM_TARGET_NOT_FOUND" and "renamed" in error["message"]

        async def avoided() -> list[Any]:
            described = await ok(c, "mm_describe_screen", {})
            return [a["target"] for a in described["priorKnowledge"]["avoid"]]

        targets = await eventually(avoided)
        assert {"testId": "recipient-address-input"} in targets

        for target in hints:
            await ok(
                c, "mm_type", {**as_target(target), "text": HINT_TEXT[target["value"]["name"]]}
            )
        filled = await ok(c, "mm_describe_screen", {})
        continue_ = preferred(filled, "click")[0]
        assert continue_ == {"type": "a11yHint", "value": {"role": "button", "name": "Continue"}}
        await ok(c, "mm_click", as_target(continue_))
        confirm = await ok(c, "mm_describe_screen", {})
        confirm_button = preferred(confirm, "click")[0]
        assert confirm_button == {
            "type": "a11yHint",
            "value": {"role": "button", "name": "Confirm"},
        }
        await ok(c, "mm_click", as_target(confirm_button))
        assert await balance(c) == "9.9 ETH"
