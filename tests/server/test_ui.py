"""The web page in real Chromium against a real `knowhow serve --transport http` on a copy of the
bundled sample: search, a session, a screen, supersede and restore, a step appearing live,
hostile recorded text shown as text, and no serious accessibility violation (axe-core).

With KNOWHOW_UPDATE_SCREENSHOTS=1 the tests also save each page's screenshot into docs/ui/, so
the pictures in the docs are made by the code they show (CI never writes them).
"""

import os
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import orjson
import pytest
from playwright.sync_api import Browser, Dialog, Page, ViewportSize, expect

from tests.server.browser_helpers import needs_chromium
from tests.server.ui_helpers import (
    HOSTILE,
    HOSTILE_SCREEN,
    SWAP_SESSION,
    XSS_SESSION,
    UiServer,
    chromium,
    ui_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]
REPO = Path(__file__).resolve().parents[2]
SHOTS_DIR = REPO / "docs" / "ui"
AXE = REPO / "vendor" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
WAIT_MS = 60_000
"""How long a page may take to show what the live index has yet to commit (generous: a loaded
CI machine; a passing check returns at once)."""
LAPTOP: ViewportSize = {"width": 1366, "height": 800}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory.mktemp("ui")) as running:
        yield running


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


def keep(page: Page, name: str) -> None:
    """Save the page's picture into docs/ui/ when asked to (KNOWHOW_UPDATE_SCREENSHOTS=1)."""
    if os.environ.get("KNOWHOW_UPDATE_SCREENSHOTS") == "1":
        SHOTS_DIR.mkdir(exist_ok=True)
        page.screenshot(path=SHOTS_DIR / f"{name}.png")


def test_search_shows_results_with_evidence_failures_and_pages(
    server: UiServer, page: Page
) -> None:
    shown(page, f"{server.url}/ui/?q=swap+button", "li.result")
    results = page.locator("li.result")
    expect(results).to_have_count(20)
    expect(page.locator(".summary")).to_contain_text("showing 1–20")
    expect(results.first.locator(".meta")).to_contain_text("matched")
    keep(page, "search")
    page.get_by_role("link", name="Next →").click()
    expect(page.locator(".summary")).to_contain_text("showing 21–40")

    page.goto(f"{server.url}/ui/?q=swap&ok=false")
    failed = page.locator("li.result")
    expect(failed.first).to_be_visible()
    assert failed.count() == page.locator("li.result.failed").count()
    assert failed.count() == page.locator("li.result .badge.fail").count()

    page.goto(f"{server.url}/ui/?q=zebra+xylophone+quasar")
    expect(page.locator(".hint")).to_contain_text("No steps match")
    expect(page.locator(".known")).to_contain_text("swap")


def test_the_search_form_takes_the_tools_filters_and_refuses_bad_ones(
    server: UiServer, page: Page
) -> None:
    shown(page, f"{server.url}/ui/", "form.search")
    page.get_by_label("Query").fill("confirm")
    page.get_by_label("Flow").fill("swap")
    page.get_by_label("Outcome").select_option("true")
    page.get_by_role("button", name="Search").click()
    expect(page.locator("li.result").first).to_be_visible()
    assert "flowTag=swap" in page.url and "ok=true" in page.url
    assert page.locator("li.result.failed").count() == 0

    page.goto(f"{server.url}/ui/?q=confirm&sinceHours=9999")
    expect(page.locator(".error")).to_contain_text("MM_INVALID_INPUT")
    expect(page.locator(".error")).to_contain_text("sinceHours")


def test_a_session_shows_its_recipe_timeline_and_recoveries(server: UiServer, page: Page) -> None:
    shown(page, f"{server.url}/ui/?q=swap+button", "li.result")
    page.locator("li.result .meta a").first.click()
    expect(page.locator("h1")).to_have_text("Exchange ETH for DAI on the unified swap page")
    expect(page.locator("#recipe-h")).to_be_visible()
    expect(page.locator("ol.timeline li.step").first).to_be_visible()
    failure = page.locator("ul.failures li").filter(has_text="recovered").first
    expect(failure).to_be_visible()
    target = failure.get_by_role("link", name="step").get_attribute("href")
    assert target is not None and page.locator(target).count() == 1  # the recovering step is there
    keep(page, "session")


def test_a_screen_shows_prior_knowledge_and_renamed_test_ids(server: UiServer, page: Page) -> None:
    shown(page, f"{server.url}/ui/?q=swap+button", "li.result")
    page.locator("li.result .head").get_by_role("link", name="swap", exact=True).first.click()
    expect(page.locator("h1")).to_contain_text("swap")
    page.goto(f"{server.url}/ui/screen?name=home")
    expect(page.locator("#prior-h")).to_be_visible()
    renamed = page.locator("tr").filter(has_text="token-overview-button-swap")
    expect(renamed).to_contain_text("coin-overview-swap")
    expect(page.locator("#history li.step").first).to_be_visible()
    keep(page, "screen")


def test_charts_are_drawn_from_the_index(server: UiServer, page: Page) -> None:
    shown(page, f"{server.url}/ui/charts", "figure.flow")
    flows = page.locator("figure.flow figcaption")
    expect(flows.filter(has_text="swap").first).to_be_visible()
    assert page.locator("figure.flow svg rect.worked").count() > 0
    expect(page.locator("#screens-h")).to_be_visible()
    expect(page.locator("ol.renames")).to_contain_text("token-overview-button-swap")
    keep(page, "charts")


def test_supersede_and_restore_change_what_search_offers(server: UiServer, page: Page) -> None:
    step = f"{SWAP_SESSION}/0019-mm_click"
    query = f"{server.url}/ui/?q=swap+button"
    decisions = server.root / SWAP_SESSION / "superseded.json"
    shown(page, query, f"li.result:has-text('{step}')")

    page.goto(f"{server.url}/ui/session/{SWAP_SESSION}")
    box = page.locator(f".curate[data-step='{step}']")
    box.get_by_text("Supersede…").click()
    box.get_by_label("Reason").fill("the bridge button moved to the header")
    box.get_by_role("button", name="Mark superseded").click()
    expect(page.locator(f".curate[data-step='{step}']")).to_contain_text("Restore", timeout=WAIT_MS)
    stored = orjson.loads(decisions.read_bytes())["steps"]["0019-mm_click"]
    assert stored["reason"] == "the bridge button moved to the header"
    assert stored["source"] == "explicit"

    page.goto(query)
    expect(page.locator("li.result").first).to_be_visible()
    expect(page.locator(f"li.result:has-text('{step}')")).to_have_count(0, timeout=WAIT_MS)

    page.goto(f"{server.url}/ui/session/{SWAP_SESSION}")
    page.locator(f".curate[data-step='{step}']").get_by_role("button", name="Restore").click()
    expect(page.locator(f".curate[data-step='{step}']")).to_contain_text(
        "Supersede", timeout=WAIT_MS
    )
    assert not decisions.exists()
    shown(page, query, f"li.result:has-text('{step}')")


def test_a_step_recorded_while_the_page_is_open_appears_without_reload(
    server: UiServer, page: Page
) -> None:
    shown(page, f"{server.url}/ui/session/{XSS_SESSION}", "ol.timeline li.step")
    page.evaluate("window.__notReloaded = true")
    server.kb.step(XSS_SESSION, test_id="appeared-live", screen="home")
    expect(page.locator("ol.timeline")).to_contain_text("appeared-live", timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded") is True


@pytest.mark.parametrize(
    "where",
    [
        f"/ui/session/{XSS_SESSION}",
        f"/ui/screen?name={quote(HOSTILE_SCREEN)}",
        "/ui/?q=bold+id&includeSuperseded=on",
        "/ui/charts",
    ],
)
def test_recorded_html_is_shown_as_text_and_runs_nothing(
    server: UiServer, page: Page, where: str
) -> None:
    shown(page, server.url + where, "main h1")
    if "charts" not in where:
        shown(page, server.url + where, f"main :text('{HOSTILE_SCREEN}'), main :text('bold-id')")
    expect(page.locator("main")).to_contain_text("bold-id" if "q=" in where else HOSTILE_SCREEN)
    assert page.locator("img[src='x']").count() == 0
    assert page.locator("main script, main b").count() == 0
    page.wait_for_timeout(300)  # an onerror handler would have run by now
    assert page.evaluate("window.__xss") is None


def test_the_hostile_goal_and_error_read_as_text(server: UiServer, page: Page) -> None:
    shown(page, f"{server.url}/ui/session/{XSS_SESSION}", "ol.timeline li.step")
    expect(page.locator("h1")).to_have_text(HOSTILE)
    expect(page.locator(".error-text").first).to_contain_text(f"Element not found: {HOSTILE}")
    assert page.evaluate("window.__xss") is None


@pytest.mark.skipif(not AXE.exists(), reason="axe-core not installed: make axe (needs npm)")
@pytest.mark.parametrize(
    "where",
    ["/ui/?q=swap+button", f"/ui/session/{SWAP_SESSION}", "/ui/screen?name=home", "/ui/charts"],
)
def test_no_serious_accessibility_violation(server: UiServer, page: Page, where: str) -> None:
    shown(page, server.url + where, "main h1")
    page.evaluate(AXE.read_text())  # evaluated by the driver: the page's CSP does not apply
    found = page.evaluate("axe.run(document, {resultTypes: ['violations']})")
    serious = [
        f"{v['id']} ({v['impact']}): {v['help']} at {[n['target'] for n in v['nodes']][:3]}"
        for v in found["violations"]
        if v["impact"] in ("serious", "critical")
    ]
    assert serious == []
