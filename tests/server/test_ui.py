"""The web page in real Chromium against a real `knowhow serve --transport http` on a copy of the
bundled sample: search, a session, a screen, the charts, supersede and restore, a step appearing
live, and no serious accessibility violation (axe-core).

With KNOWHOW_UPDATE_SCREENSHOTS=1 the tests also save each page's screenshot into docs/ui/, so
the pictures in the docs are made by the code they show (CI never writes them).
"""

import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from playwright.sync_api import Page, expect

from tests.server.browser_helpers import needs_chromium
from tests.server.ui_helpers import (
    SWAP_SESSION,
    WAIT_MS,
    UiServer,
    browser,
    page,
    shown,
    ui_server,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow, needs_chromium]
__all__ = ["browser", "page"]  # fixtures of every page test (tests.server.ui_helpers)
REPO = Path(__file__).resolve().parents[2]
SHOTS_DIR = REPO / "docs" / "ui"
AXE = REPO / "vendor" / "axe" / "node_modules" / "axe-core" / "axe.min.js"
LIVE_SESSION = "mm-mm9ikvfm-w90odu"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UiServer]:
    with ui_server(tmp_path_factory.mktemp("ui"), hostile=False) as running:
        yield running


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
    expect(page.locator("ol.changes")).to_contain_text("token-overview-button-swap")
    expect(page.locator("ol.changes")).to_contain_text("superseded")
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
    shown(page, f"{server.url}/ui/session/{LIVE_SESSION}", "ol.timeline li.step")
    page.evaluate("window.__notReloaded = true")
    page.locator(".curate summary").first.click()  # a form the reader opened stays open
    server.kb.step(LIVE_SESSION, test_id="appeared-live", screen="home")
    expect(page.locator("ol.timeline")).to_contain_text("appeared-live", timeout=WAIT_MS)
    assert page.evaluate("window.__notReloaded") is True
    expect(page.locator(".curate details").first).to_have_attribute("open", "")


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


def test_the_keyboard_alone_searches_and_curates(server: UiServer, page: Page) -> None:
    shown(page, f"{server.url}/ui/", "form.search")
    page.keyboard.type("swap button")  # the query field has the focus on arrival
    page.keyboard.press("Enter")
    expect(page.locator("li.result").first).to_be_visible()
    page.goto(f"{server.url}/ui/session/{SWAP_SESSION}")
    page.keyboard.press("Tab")
    expect(page.locator(".skip")).to_be_focused()  # the first stop skips the header
    summary = page.locator(".curate summary").first
    summary.focus()
    page.keyboard.press("Enter")
    expect(page.locator(".curate details").first).to_have_attribute("open", "")
    page.keyboard.press("Tab")
    expect(page.locator(".curate input[name=reason]").first).to_be_focused()
