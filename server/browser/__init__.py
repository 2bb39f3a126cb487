"""Browser tools on Playwright: Chromium lifecycle, observation, targets and recorded steps.

`driver` owns Chromium (one per server lifespan), `observe` reads testIds and the accessibility
tree without scripts in the page, `targets` turns testId / selector / a11yRef / a11yHint into
locators, `actions` acts, `steps` records every call, `tools` declares the MCP tools.
"""

from server.browser.driver import BrowserDriver, InvalidScreenRules, load_screen_rules

__all__ = ["BrowserDriver", "InvalidScreenRules", "load_screen_rules"]
