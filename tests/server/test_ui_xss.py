"""Recorded text that holds HTML or script (a goal, a tag, a screen name, a testId, an error
message) shows as text on every page and runs nothing, in real Chromium against a real server.
Unescaped, it would put an `<img src=x>`, a `<script>` or a `<b>` element into the page."""

from collections.abc import Iterator
from urllib.parse import quote

import pytest
from playwright.sync_api import Page, expect

from tests.server import ui_helpers as ui
from tests.server.browser_helpers import needs_chromium
from tests.server.ui_helpers import UiServer, browser, page

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]
__all__ = ["browser", "page"]  # fixtures of every page test (tests.server.ui_helpers)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui.ui_server(tmp_path_factory.mktemp("ui-xss")) as running:
        yield running


@pytest.mark.parametrize(
    "where",
    [
        f"/ui/session/{ui.XSS_SESSION}",
        f"/ui/screen?name={quote(ui.HOSTILE_SCREEN)}",
        "/ui/?q=bold+id&includeSuperseded=on",
        "/ui/charts",
    ],
)
def test_recorded_html_is_shown_as_text_and_runs_nothing(
    server: UiServer, page: Page, where: str
) -> None:
    ui.shown(page, server.url + where, "main h1")
    if "charts" not in where:
        ui.shown(
            page, server.url + where, f"main :text('{ui.HOSTILE_SCREEN}'), main :text('bold-id')"
        )
    expect(page.locator("main")).to_contain_text("bold-id" if "q=" in where else ui.HOSTILE_SCREEN)
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("main script, main b").count() == 0
    page.wait_for_timeout(300)  # an onerror handler would have run by now
    assert page.evaluate("window.__xss") is None


def test_the_hostile_goal_and_error_read_as_text(server: UiServer, page: Page) -> None:
    ui.shown(page, f"{server.url}/ui/session/{ui.XSS_SESSION}", "ol.timeline li.step")
    expect(page.locator("h1")).to_have_text(ui.HOSTILE)
    expect(page.locator(".error-text").first).to_contain_text(f"Element not found: {ui.HOSTILE}")
    assert page.evaluate("window.__xss") is None
