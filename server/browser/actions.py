"""What the browser tools do to the page, and how Playwright's failures become `MM_…` errors.

Each action notes on the step draft what the record needs beyond the agent's input: the
target's role and accessible name (read from the element's own aria snapshot before acting, so
the knowledge survives a testId rename) and whether the typed text was a secret. A target that
never appears is MM_TARGET_NOT_FOUND; one that appears but never becomes actionable is
MM_WAIT_TIMEOUT; anything else Playwright refuses is the tool's own code ("Operation failed: …").
"""

import struct
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any
from urllib.parse import urldefrag

import anyio.to_thread
from playwright.async_api import Error as PlaywrightError
from playwright.async_api import TimeoutError as PlaywrightTimeout

from engine import A11yHint, KnowledgeStore, Observation, StepTarget, is_secret
from server.browser.driver import BrowserSession, first_line
from server.browser.errors import (
    BrowserError,
    ClickFailed,
    NavigationFailed,
    ScreenshotFailed,
    TargetNotFound,
    TypeFailed,
    WaitTimeout,
)
from server.browser.inputs import (
    ClickInput,
    NavigateInput,
    ScreenshotInput,
    TypeInput,
    WaitForInput,
)
from server.browser.observe import ELEMENT_READ_TIMEOUT_MS, element_hint
from server.browser.targets import Located, TargetInput, locate, stale_ref

SCREENSHOTS_DIR = "screenshots"


@dataclass
class StepDraft:
    """What an action learned for the step record, kept even when the action then fails."""

    target: StepTarget | None = None
    secret: bool = False
    observation: Observation | None = None
    """Set by discovery tools: what they saw is the step's observation."""
    artifacts: dict[str, Any] | None = None


def _browser_gone(session: BrowserSession) -> BrowserError:
    prefix = session.prefix
    return BrowserError(
        f"the browser was closed or crashed: call {prefix}cleanup, then {prefix}launch again"
    )


@asynccontextmanager
async def _failures(
    session: BrowserSession, located: Located, failed: type[BrowserError], timeout_ms: int
) -> AsyncIterator[None]:
    """Playwright errors of one action on `located` -> the tool's `MM_…` error."""
    prefix = session.prefix
    try:
        yield
    except PlaywrightTimeout:
        if session.page.is_closed():
            raise _browser_gone(session) from None
        if await _absent(located):
            raise TargetNotFound(
                f"No element matches {located.label} after {timeout_ms} ms; it may have been "
                f"renamed. Call {prefix}describe_screen for the current testIds and suggestions."
            ) from None
        raise WaitTimeout(
            f"Timeout {timeout_ms}ms exceeded: {located.label} is present but not ready "
            f"(disabled, hidden or covered). Complete the form first, or {prefix}wait_for it."
        ) from None
    except PlaywrightError as exc:
        if session.page.is_closed():
            raise _browser_gone(session) from None
        raise failed(f"Operation failed on {located.label}: {first_line(exc)}") from None


async def _absent(located: Located) -> bool:
    try:
        return await located.locator.count() == 0
    except PlaywrightError:  # the page is navigating away: the element is not there either
        return True


async def _check_ref(session: BrowserSession, target: TargetInput, located: Located) -> None:
    """A ref whose element is gone is stale: fail at once instead of waiting for it."""
    if target.a11yRef and await _absent(located):
        raise stale_ref(located, session.prefix)


async def _hint(located: Located, timeout_ms: int) -> A11yHint | None:
    """The role and name of the target; waiting for its aria snapshot waits for the element."""
    if located.hint is not None:
        return located.hint
    return element_hint(await located.locator.aria_snapshot(timeout=timeout_ms))


async def click(request: ClickInput, session: BrowserSession, draft: StepDraft) -> None:
    located = locate(session.page, request, session.refs, session.prefix)
    timeout_ms = request.timeoutMs
    async with _failures(session, located, ClickFailed, timeout_ms):
        await _check_ref(session, request, located)
        draft.target = _with_hint(draft.target, await _hint(located, timeout_ms))
        await located.locator.click(timeout=timeout_ms)


async def type_text(request: TypeInput, session: BrowserSession, draft: StepDraft) -> None:
    """Replace the field's value with the text (Playwright `fill`: input events, no keys)."""
    located = locate(session.page, request, session.refs, session.prefix)
    timeout_ms = request.timeoutMs
    async with _failures(session, located, TypeFailed, timeout_ms):
        await _check_ref(session, request, located)
        hint = await _hint(located, timeout_ms)
        draft.target = _with_hint(draft.target, hint)
        kind = await located.locator.get_attribute("type", timeout=timeout_ms)
        draft.secret = kind == "password" or is_secret(hint.name if hint else None)
        await located.locator.fill(request.text, timeout=timeout_ms)


async def wait_for(request: WaitForInput, session: BrowserSession, draft: StepDraft) -> None:
    located = locate(session.page, request, session.refs, session.prefix)
    timeout_ms, state = request.timeoutMs, request.state
    async with _failures(session, located, WaitTimeout, timeout_ms):
        try:
            await located.locator.wait_for(state=state, timeout=timeout_ms)
        except PlaywrightTimeout:
            raise WaitTimeout(
                f"Timeout {timeout_ms}ms exceeded waiting for {located.label} to be {state}"
            ) from None
        if state in ("visible", "attached"):
            hint = await _hint(located, ELEMENT_READ_TIMEOUT_MS)
            draft.target = _with_hint(draft.target, hint)


def resolve_url(url: str, current: str) -> str:
    """`#/send` is a route of the current page; anything else is taken as given."""
    return urldefrag(current).url + url if url.startswith("#") else url


async def navigate(request: NavigateInput, session: BrowserSession, draft: StepDraft) -> None:
    address = resolve_url(request.url, session.page.url)
    try:
        await session.page.goto(address, wait_until="domcontentloaded", timeout=request.timeoutMs)
    except PlaywrightError as exc:
        if session.page.is_closed():
            raise _browser_gone(session) from None
        raise NavigationFailed(
            f"Could not open {address}: {first_line(exc)}. Check that the app is served and "
            "the URL is right."
        ) from None


@dataclass(frozen=True, slots=True)
class Screenshot:
    path: Path
    width: int
    height: int


async def screenshot(
    request: ScreenshotInput, store: KnowledgeStore, session: BrowserSession, draft: StepDraft
) -> Screenshot:
    """A PNG of the page in the session's folder: `screenshots/<NNNN>-<name>.png`, written
    through the store, so a session folder that is a link is refused like any step write."""
    try:
        data = await session.page.screenshot(full_page=request.fullPage)
    except PlaywrightError as exc:
        if session.page.is_closed():
            raise _browser_gone(session) from None
        raise ScreenshotFailed(f"Operation failed: {first_line(exc)}") from None
    width, height = struct.unpack(">II", data[16:24])  # the PNG IHDR chunk
    save = partial(store.save_artifact, session.session_id, SCREENSHOTS_DIR)
    relative = await anyio.to_thread.run_sync(save, f"-{request.name}.png", data)
    draft.artifacts = {"screenshot": {"path": relative, "width": width, "height": height}}
    return Screenshot(store.root / session.session_id / relative, width, height)


def _with_hint(target: StepTarget | None, hint: A11yHint | None) -> StepTarget | None:
    if target is None or hint is None:
        return target
    return target.model_copy(update={"a11yHint": hint})
