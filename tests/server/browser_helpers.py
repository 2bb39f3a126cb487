"""Browser test helpers: is there a Chromium, the demo wallet on a free port, its flows.

The demo app (server/demo/demo_app) is served by Python's http.server in a thread, on 127.0.0.1
and a free port; its CSP forbids inline and injected scripts, so every browser test also shows
that the tools need none.
"""

import os
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from playwright.sync_api import Error as PlaywrightError
from playwright.sync_api import sync_playwright

from server.browser.driver import chromium_executable
from server.demo import DEMO_APP
from tests.server.mcp_helpers import call, ok

DEMO_RULES = DEMO_APP / "screen-rules.json"
PASSWORD = "correct horse battery staple"
RECIPIENT = "0x2f318C334780961FB129D2a6c30D0763d9a5C970"
FAIL_FAST_MS = 400
"""timeoutMs of the calls meant to fail (a renamed testId), so the suite stays fast."""


@cache
def chromium_available() -> bool:
    """Debian's (or KNOWHOW_CHROMIUM's) Chromium, else a browser Playwright installed itself."""
    configured = os.environ.get("KNOWHOW_CHROMIUM")
    executable = chromium_executable(Path(configured) if configured else None)
    if executable is not None:
        return executable.exists()
    try:
        with sync_playwright() as playwright:
            return Path(playwright.chromium.executable_path).exists()
    except PlaywrightError:
        return False


needs_chromium = pytest.mark.skipif(
    not chromium_available(),
    reason="no Chromium: apt-get install chromium (or set KNOWHOW_CHROMIUM to a Chromium binary)",
)


def prior(describe: dict[str, Any]) -> dict[str, Any]:
    knowledge = describe["priorKnowledge"]
    assert isinstance(knowledge, dict), describe
    return knowledge


def preferred(describe: dict[str, Any], action: str | None = None) -> list[dict[str, Any]]:
    """The preferred targets of the suggestions (of one action), best first."""
    return [
        s["preferredTarget"]
        for s in prior(describe)["suggestedNextActions"]
        if action is None or s["action"] == action
    ]


def as_target(preferred_target: dict[str, Any]) -> dict[str, Any]:
    """A suggestion's preferredTarget as the arguments of mm_click / mm_type."""
    return {preferred_target["type"]: preferred_target["value"]}


async def unlock(client: Client) -> None:
    await ok(client, "mm_type", {"testId": "unlock-password", "text": PASSWORD})
    state = (await ok(client, "mm_click", {"testId": "unlock-submit"}))["state"]
    assert state["currentScreen"] == "home", state


async def balance(client: Client) -> str:
    """The ETH balance the home screen shows (the testId's text)."""
    listed = await ok(client, "mm_list_testids", {})
    texts = {t["testId"]: t.get("text") for t in listed["testIds"]}
    return str(texts["coin-overview__primary-currency"])


async def failure(client: Client, tool: str, args: dict[str, Any]) -> dict[str, str]:
    envelope = await call(client, tool, args)
    assert envelope["ok"] is False, envelope
    error: dict[str, str] = envelope["error"]
    return error
