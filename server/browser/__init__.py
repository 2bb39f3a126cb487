"""Browser automation on Playwright: Chromium's lifecycle, what a page shows, targets, actions.

`driver` owns Chromium (one per server lifespan), `observe` reads testIds and the accessibility
tree without scripts in the page, `targets` turns testId / selector / a11yRef / a11yHint into
locators, `actions` acts, `inputs` are the arguments the browser tools validate. Nothing here
knows the server's state or the MCP tools: the state owns a `BrowserDriver`, and the browser
tools (`server.tools.browser`) drive it and record each call.
"""

from server.browser.driver import BrowserDriver, InvalidScreenRules, load_screen_rules

__all__ = ["BrowserDriver", "InvalidScreenRules", "load_screen_rules"]
