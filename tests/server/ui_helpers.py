"""The web page's test setup: a copy of the bundled sample plus hostile and screenshot sessions,
served by a real `knowhow serve --transport http`, and Chromium to look at it.

`HOSTILE` is HTML that runs script when it is not escaped: it is recorded as a goal, a tag, a
screen name, a testId and an error message, so a page that shows recorded text unescaped
grows an `<img src=x>` or a `<script>` element the tests look for.
"""

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import pytest
from playwright.sync_api import Browser, Dialog, Page, ViewportSize, expect, sync_playwright

from engine import StepRecord
from server.browser.driver import CHROMIUM_ARGS, chromium_executable
from server.demo import SAMPLE_ROOT
from tests.conftest import Knowledge
from tests.server.mcp_helpers import start_http, stop

HOSTILE = '<img src=x onerror="window.__xss=1">'
HOSTILE_SCREEN = "<script>window.__xss=2</script>"
XSS_SESSION = "mm-xss-0001"
SHOTS_SESSION = "mm-shots-0001"
SWAP_SESSION = "mm-mlfgj375-eoid2h"
"""A sample session with failures and what recovered them."""
PNG = (
    b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00"
    b"\x1f\x15\xc4\x89\x00\x00\x00\rIDATx\x9cc\xf8\x0f\x00\x00\x01\x01\x00\x05\x18\xd8N\x00"
    b"\x00\x00\x00IEND\xaeB`\x82"
)
WAIT_MS = 60_000
"""How long a page may take to show what the live index has yet to commit (generous: a loaded
CI machine; a passing check returns at once)."""
LAPTOP: ViewportSize = {"width": 1366, "height": 800}
SHOTS = {
    "good": "screenshots/0001.png",
    "traversal": f"../{XSS_SESSION}/session.json",
    "absolute": "/etc/passwd",
    "missing": "screenshots/9999.png",
    "huge": "screenshots/huge.png",
    "link": "screenshots/link.png",
}
"""The screenshot path each step of the screenshot session records, by what it tests."""


@dataclass
class UiServer:
    root: Path
    port: int
    kb: Knowledge
    shot_steps: dict[str, str]
    """Step id of each `SHOTS` case."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def post(self, path: str, body: bytes, **headers: str) -> httpx2.Response:
        return httpx2.post(self.url + path, content=body, headers=headers, timeout=30)

    def get(self, path: str, **headers: str) -> httpx2.Response:
        return httpx2.get(self.url + path, headers=headers, timeout=30)


def prepared_root(base: Path, hostile: bool) -> tuple[Knowledge, dict[str, str]]:
    """The sample sessions, and when `hostile` a session of hostile text and one of screenshot
    cases (the pages' pictures in docs/ are taken without them)."""
    kb = Knowledge(base)
    shutil.copytree(SAMPLE_ROOT, kb.root)
    if not hostile:
        return kb, {}
    kb.session(XSS_SESSION, goal=HOSTILE, flow_tags=["xss"], tags=[HOSTILE])
    error = ("MM_TARGET_NOT_FOUND", f"Element not found: {HOSTILE}")
    kb.step(XSS_SESSION, test_id="<b>bold-id</b>", screen=HOSTILE_SCREEN, ok=False, error=error)
    kb.session(SHOTS_SESSION, goal="screenshots of every kind", flow_tags=["shots"])
    kb.store.save_artifact(SHOTS_SESSION, "screenshots", ".png", PNG)  # 0001.png
    folder = kb.root / SHOTS_SESSION / "screenshots"
    with (folder / "huge.png").open("wb") as huge:
        huge.write(PNG[:8])
        huge.truncate(9 * 1024 * 1024)  # sparse: larger than any screenshot served
    os.symlink("/etc/passwd", folder / "link.png")
    steps = {}
    for case, path in SHOTS.items():
        record = kb.record(SHOTS_SESSION, "mm_screenshot", screen="home")
        data: dict[str, Any] = record.model_dump(mode="json", exclude_none=True)
        data["artifacts"] = {"screenshot": {"path": path, "width": 1, "height": 1}}
        steps[case] = kb.store.record_step(StepRecord.model_validate(data))
    return kb, steps


@contextmanager
def ui_server(base: Path, *, hostile: bool = True) -> Iterator[UiServer]:
    kb, steps = prepared_root(base, hostile)
    proc: subprocess.Popen[bytes]
    proc, port = start_http(kb.root, kb.index_dir, base / "server.log")
    try:
        yield UiServer(kb.root, port, kb, steps)
    finally:
        stop(proc)


@contextmanager
def chromium() -> Iterator[Browser]:
    executable = chromium_executable(None)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(executable) if executable else None, args=list(CHROMIUM_ARGS)
        )
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as running:
        yield running


@pytest.fixture
def page(browser: Browser) -> Iterator[Page]:
    """A fresh page; any dialog (what injected script would open) fails the test."""
    context = browser.new_context(viewport=LAPTOP)
    opened = context.new_page()
    dialogs: list[str] = []

    def refuse(dialog: Dialog) -> None:
        dialogs.append(dialog.message)
        dialog.dismiss()

    opened.on("dialog", refuse)
    yield opened
    context.close()
    assert dialogs == []


def shown(page: Page, url: str, selector: str) -> None:
    """Open `url` and wait until `selector` shows, reloading while the index is still being
    built (the server answers as soon as it listens)."""
    page.goto(url)
    deadline = WAIT_MS
    while page.locator(selector).count() == 0 and deadline > 0:
        page.wait_for_timeout(250)
        deadline -= 250
        if deadline % 2000 == 0:
            page.reload()
    expect(page.locator(selector).first).to_be_visible()
