"""The browser tools one by one, through an in-memory MCP client on real headless Chromium:
targets (testId, selector, a11yRef, a11yHint), stale refs, the error codes of each failure and
what is recorded for it, discovery tools, screenshots, the browser lifecycle, extensions."""

import urllib.request
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import orjson
import pytest
from mcp import Client

from server.app import create_server
from server.demo import demo_app
from server.settings import ServerSettings
from server.tools.browser import BROWSER_TOOLS
from tests.server.browser_helpers import (
    DEMO_RULES,
    FAIL_FAST_MS,
    PASSWORD,
    failure,
    needs_chromium,
    unlock,
)
from tests.server.mcp_helpers import ok

pytestmark = pytest.mark.anyio

VALID_ARGS: dict[str, dict[str, Any]] = {
    "navigate": {"url": "#/send"},
    "click": {"testId": "x"},
    "type": {"testId": "x", "text": "y"},
    "wait_for": {"testId": "x"},
    "describe_screen": {},
    "list_testids": {},
    "accessibility_snapshot": {},
    "get_state": {},
    "screenshot": {},
    "cleanup": {},
}


@pytest.fixture(scope="module")
def app_url() -> Iterator[str]:
    with demo_app() as url:
        yield url


@asynccontextmanager
async def agent(root: Path, index: Path, **settings: Any) -> AsyncIterator[Client]:
    config = ServerSettings(root=root, index=index, screen_rules=DEMO_RULES, **settings)
    async with Client(create_server(config)) as client:
        yield client


def step_files(root: Path) -> list[dict[str, Any]]:
    return [orjson.loads(p.read_bytes()) for p in sorted(root.glob("*/steps/*.json"))]


async def test_browser_tools_are_listed_as_open_world(root: Path, index: Path) -> None:
    async with agent(root, index) as client:
        tools = {t.name: t for t in (await client.list_tools()).tools}
    assert {"mm_" + name for name in [*VALID_ARGS, "launch"]} <= set(tools)
    for spec in BROWSER_TOOLS:
        tool = tools["mm_" + spec.name]
        assert tool.annotations is not None and tool.annotations.open_world_hint is True
        assert tool.annotations.read_only_hint is False  # every call is recorded
        assert tool.input_schema["additionalProperties"] is False


async def test_without_a_browser_every_tool_says_to_launch_first(root: Path, index: Path) -> None:
    async with agent(root, index) as client:
        for name, args in VALID_ARGS.items():
            error = await failure(client, "mm_" + name, args)
            assert error["code"] == "MM_NO_ACTIVE_SESSION", (name, error)
            assert "call mm_launch first" in error["message"]
        bad = await failure(client, "mm_click", {"testId": "a", "a11yRef": "e1"})
        assert bad["code"] == "MM_INVALID_INPUT" and "exactly one" in bad["message"]
        assert (await failure(client, "mm_launch", {"url": "localhost"}))["code"] == (
            "MM_INVALID_INPUT"
        )
    assert not root.exists() or not list(root.iterdir())


async def test_a_missing_chromium_is_a_launch_failure_that_leaves_no_session(
    root: Path, index: Path, tmp_path: Path
) -> None:
    async with agent(root, index, chromium=tmp_path / "no-chromium") as client:
        error = await failure(client, "mm_launch", {"url": "http://127.0.0.1:9/"})
    assert error["code"] == "MM_LAUNCH_FAILED" and "KNOWHOW_CHROMIUM" in error["message"]
    assert not root.exists() or not list(root.iterdir())


@pytest.mark.browser
@needs_chromium
async def test_refs_target_the_latest_snapshot_and_go_stale(
    root: Path, index: Path, app_url: str
) -> None:
    async with agent(root, index) as client:
        await ok(client, "mm_launch", {"url": app_url})
        snapshot = await ok(client, "mm_accessibility_snapshot", {})
        refs = {(n["role"], n["name"]): n["ref"] for n in snapshot["nodes"]}
        assert snapshot["state"]["currentScreen"] == "unlock"

        typed = await ok(
            client, "mm_type", {"a11yRef": refs["textbox", "Password"], "text": PASSWORD}
        )
        assert typed["textRedacted"] is True
        assert typed["target"]["a11yHint"] == {"role": "textbox", "name": "Password"}
        clicked = await ok(client, "mm_click", {"a11yRef": refs["button", "Unlock"]})
        assert clicked["state"]["currentScreen"] == "home"

        stale = await failure(client, "mm_click", {"a11yRef": refs["button", "Unlock"]})
        assert stale["code"] == "MM_TARGET_NOT_FOUND"
        assert "stale" in stale["message"] and "mm_describe_screen again" in stale["message"]
        unknown = await failure(client, "mm_click", {"a11yRef": "e99"})
        assert unknown["message"].startswith("Unknown a11yRef: e99. Available refs: e1, e2")

        fresh = await ok(client, "mm_describe_screen", {})
        send = next(n["ref"] for n in fresh["a11y"]["nodes"] if n["name"] == "Send")
        moved = await ok(client, "mm_click", {"a11yRef": send})
        assert moved["state"]["currentScreen"] == "send"

    steps = step_files(root)
    typed_step = next(s for s in steps if s["tool"]["name"] == "mm_type")
    assert typed_step["tool"]["input"]["text"] == "[REDACTED]"
    assert typed_step["tool"]["textLength"] == len(PASSWORD)
    assert PASSWORD not in "".join(p.read_text() for p in root.rglob("*.json"))
    failed = [s for s in steps if not s["outcome"]["ok"]]
    assert [s["outcome"]["error"]["code"] for s in failed] == ["MM_TARGET_NOT_FOUND"] * 2
    assert all("error-recovery" in s["labels"] for s in failed)


@pytest.mark.browser
@needs_chromium
async def test_each_failure_has_its_code_and_is_recorded_with_the_screen(
    root: Path, index: Path, app_url: str
) -> None:
    async with agent(root, index) as client:
        await ok(client, "mm_launch", {"url": app_url})
        await unlock(client)
        routed = await ok(client, "mm_navigate", {"url": "#/send"})
        assert routed["state"]["currentScreen"] == "send"
        fast = {"timeoutMs": FAIL_FAST_MS}

        disabled = await failure(client, "mm_click", {"testId": "send-continue-button", **fast})
        assert disabled["code"] == "MM_WAIT_TIMEOUT" and "not ready" in disabled["message"]
        renamed = await failure(client, "mm_click", {"testId": "send-page-continue", **fast})
        assert renamed["code"] == "MM_TARGET_NOT_FOUND"
        hidden = await failure(client, "mm_wait_for", {"testId": "send-recipient-error", **fast})
        assert hidden["code"] == "MM_WAIT_TIMEOUT"
        await ok(client, "mm_wait_for", {"testId": "send-recipient-error", "state": "hidden"})
        heading = await failure(client, "mm_type", {"selector": "h2 >> visible=true", "text": "x"})
        assert heading["code"] == "MM_TYPE_FAILED" and heading["message"].startswith("Operation")
        ambiguous = await failure(client, "mm_click", {"selector": "button", **fast})
        assert ambiguous["code"] == "MM_CLICK_FAILED" and "strict mode" in ambiguous["message"]

        typed = await ok(client, "mm_type", {"selector": "#recipient", "text": "0xnot-an-address"})
        assert typed["target"]["a11yHint"] == {"role": "textbox", "name": "Recipient address"}
        shown = await ok(client, "mm_wait_for", {"testId": "send-recipient-error"})
        assert shown["target"] == {"testId": "send-recipient-error"}  # a paragraph has no name

        down = await failure(client, "mm_navigate", {"url": "http://127.0.0.1:9/", **fast})
        assert down["code"] == "MM_NAVIGATION_FAILED"

    steps = step_files(root)
    by_code: dict[str, dict[str, Any]] = {}
    for step in steps:
        if not step["outcome"]["ok"]:
            by_code.setdefault(step["outcome"]["error"]["code"], step)  # the first of each
    assert set(by_code) >= {"MM_WAIT_TIMEOUT", "MM_TARGET_NOT_FOUND", "MM_TYPE_FAILED"}
    timeout = by_code["MM_WAIT_TIMEOUT"]
    assert timeout["observation"]["state"]["currentScreen"] == "send"
    assert timeout["observation"]["testIds"], "a failure records what was there instead"
    assert timeout["tool"]["target"]["a11yHint"] == {"role": "button", "name": "Continue"}
    assert by_code["MM_NAVIGATION_FAILED"]["labels"] == ["navigation", "error-recovery"]
    worked = [s for s in steps if s["outcome"]["ok"] and s["tool"]["name"] == "mm_type"]
    assert worked and all(not s["observation"]["testIds"] for s in worked)
    assert all(s["timing"]["durationMs"] >= 0 for s in steps)


@pytest.mark.browser
@needs_chromium
async def test_discovery_and_opt_in_screenshots_on_a_page_that_forbids_scripts(
    root: Path, index: Path, app_url: str
) -> None:
    with urllib.request.urlopen(app_url) as response:  # the demo app's CSP
        assert "script-src 'self'" in response.read().decode()
    async with agent(root, index) as client:
        launched = await ok(client, "mm_launch", {"url": app_url, "tags": ["csp"]})
        session = root / launched["sessionId"]
        await unlock(client)
        listed = await ok(client, "mm_list_testids", {"limit": 3})
        assert [t["testId"] for t in listed["testIds"]] == [
            "app-header-logo",
            "account-menu-icon",
            "global-menu-activity",
        ]
        assert [t["visible"] for t in listed["testIds"]] == [True, True, False]
        assert listed["testIds"][0] == {
            "testId": "app-header-logo",
            "tag": "element",
            "text": "Demo Wallet",
            "visible": True,
        }
        state = await ok(client, "mm_get_state", {})
        assert state["state"]["currentScreen"] == "home" and state["state"]["isLoaded"] is True
        assert not list(session.rglob("*.png")), "screenshots are opt-in"

        shot = await ok(client, "mm_screenshot", {"name": "home"})
        assert Path(shot["path"]) == session / "screenshots" / "0001-home.png"
        assert Path(shot["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert shot["width"] > 0 and shot["height"] > 0
        await ok(client, "mm_cleanup", {})

    steps = step_files(root)
    assert [s["tool"]["name"] for s in steps][-4:] == [
        "mm_list_testids",
        "mm_get_state",
        "mm_screenshot",
        "mm_cleanup",
    ]
    screenshot = steps[-2]
    assert screenshot["artifacts"]["screenshot"]["path"] == "screenshots/0001-home.png"
    assert screenshot["labels"] == [] and steps[-1]["labels"] == []
    assert steps[-4]["labels"] == ["discovery"] and len(steps[-4]["observation"]["testIds"]) > 3


@pytest.mark.browser
@needs_chromium
async def test_one_browser_at_a_time_and_a_new_session_after_cleanup(
    root: Path, index: Path, app_url: str
) -> None:
    async with agent(root, index) as client:
        down = await failure(client, "mm_launch", {"url": "http://127.0.0.1:9/"})
        assert down["code"] == "MM_LAUNCH_FAILED" and "did not open" in down["message"]
        assert not root.exists() or not list(root.iterdir())

        first = await ok(client, "mm_launch", {"url": app_url, "flowTags": ["send"]})
        again = await failure(client, "mm_launch", {"url": app_url})
        assert again["code"] == "MM_SESSION_ALREADY_RUNNING" and "mm_cleanup" in again["message"]
        closed = await ok(client, "mm_cleanup", {})
        assert closed["sessionId"] == first["sessionId"]
        assert (await failure(client, "mm_get_state", {}))["code"] == "MM_NO_ACTIVE_SESSION"

        second = await ok(client, "mm_launch", {"url": app_url, "headless": True})
        assert second["sessionId"] != first["sessionId"]
        current = await ok(client, "mm_knowledge_status", {})
        assert current["currentSession"] == second["sessionId"]
    launched = [s for s in step_files(root) if s["tool"]["name"] == "mm_launch"]
    assert len(launched) == 2 and launched[0]["observation"]["state"]["currentScreen"] == "unlock"


@pytest.mark.browser
@needs_chromium
async def test_an_unpacked_extension_opens_on_its_own_page(
    root: Path, index: Path, tmp_path: Path
) -> None:
    extension = tmp_path / "extension"
    extension.mkdir()
    manifest = {"manifest_version": 3, "name": "knowhow test", "version": "1.0"}
    (extension / "manifest.json").write_bytes(orjson.dumps(manifest))
    (extension / "home.html").write_text(
        '<!doctype html><title>x</title><h1>Wallet</h1><button data-testid="go">Go</button>'
    )
    async with agent(root, index) as client:
        launched = await ok(client, "mm_launch", {"extensionPath": str(extension)})
        state = launched["state"]
        assert state["currentUrl"] == f"chrome-extension://{state['extensionId']}/home.html"
        clicked = await ok(client, "mm_click", {"testId": "go"})
        assert clicked["target"]["a11yHint"] == {"role": "button", "name": "Go"}
    meta = orjson.loads(next(root.glob("*/session.json")).read_bytes())
    assert meta["launch"]["extensionPath"] == str(extension)


async def test_file_urls_are_refused_unless_the_operator_allows_them(
    root: Path, index: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An agent opening file:///… would read the machine's files through what the browser
    tools observe; nothing is launched, recorded or navigated."""
    secret = tmp_path / "id_ed25519"
    secret.write_text("-----BEGIN OPENSSH PRIVATE KEY-----")
    async with agent(root, index) as client:
        for tool in ("mm_launch", "mm_navigate"):
            error = await failure(client, tool, {"url": secret.as_uri()})
            assert error["code"] == "MM_INVALID_INPUT", (tool, error)
            assert error["message"].startswith("url: file:// URLs open the files of the machine")
            assert "--allow-file-urls" in error["message"]
    assert not list(root.iterdir())
    monkeypatch.setenv("KNOWHOW_ALLOW_FILE_URLS", "true")
    assert ServerSettings(root=root, index=index).allow_file_urls


@pytest.mark.browser
@needs_chromium
async def test_an_operator_may_allow_file_urls(root: Path, index: Path, tmp_path: Path) -> None:
    page = tmp_path / "wallet.html"
    page.write_text('<!doctype html><title>x</title><button data-testid="go">Go</button>')
    async with agent(root, index, allow_file_urls=True) as client:
        launched = await ok(client, "mm_launch", {"url": page.as_uri()})
        assert launched["state"]["currentUrl"] == page.as_uri()
        await ok(client, "mm_navigate", {"url": page.as_uri() + "#/send"})
        await ok(client, "mm_cleanup", {})
