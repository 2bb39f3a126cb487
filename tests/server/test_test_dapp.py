"""MetaMask's @metamask/test-dapp served by the demo server with knowhow's EIP-1193 test provider
as a script of the page: the provider answers deterministically, and an agent driving real
Chromium through `knowhow serve` can connect to the dapp by accessible names alone (its
Connect button then reads "Connected", disabled)."""

from pathlib import Path
from urllib.request import urlopen

import pytest

from server.browser.driver import load_screen_rules
from server.demo import PROVIDER_PATH, metamask_test_dapp, metamask_test_dapp_installed
from tests.server.browser_helpers import needs_chromium
from tests.server.mcp_helpers import eventually, ok, stdio_agent

TEST_DAPP_RULES = Path(__file__).resolve().parents[2] / "engine" / "rules" / "test-dapp.json"

pytestmark = pytest.mark.skipif(
    not metamask_test_dapp_installed(),
    reason="@metamask/test-dapp not installed: `make test-dapp` needs the npm registry",
)


def test_served_page_loads_the_test_provider_before_the_dapp() -> None:
    with metamask_test_dapp() as url:
        html = urlopen(url, timeout=10).read().decode()
        provider = urlopen(url.rstrip("/") + PROVIDER_PATH, timeout=10).read().decode()
    assert html.index(PROVIDER_PATH) < html.index('src="main.js"')
    assert "eip6963:announceProvider" in provider
    assert "eth_signTypedData_v4" in provider


def test_test_dapp_rules_name_its_pages() -> None:
    rules = load_screen_rules(TEST_DAPP_RULES)
    assert rules.detect("http://127.0.0.1:8123/") == "test-dapp"
    assert rules.detect("http://127.0.0.1:8123/index.html?x=1") == "test-dapp"
    assert rules.detect("http://127.0.0.1:8123/request.html") == "test-dapp-request"


@pytest.mark.browser
@pytest.mark.anyio
@needs_chromium
async def test_agent_connects_to_the_test_dapp_by_accessible_name(
    root: Path, index: Path, log: Path
) -> None:
    with metamask_test_dapp() as url:
        async with stdio_agent(root, index, log, "--screen-rules", str(TEST_DAPP_RULES)) as agent:
            launched = await ok(agent, "mm_launch", {"url": url, "goal": "Connect the test dapp"})
            assert launched["state"]["currentScreen"] == "test-dapp", launched
            await ok(agent, "mm_click", {"a11yHint": {"role": "button", "name": "Connect"}})

            async def connected() -> bool:
                nodes = (await ok(agent, "mm_describe_screen", {}))["a11y"]["nodes"]
                return any(
                    n["role"] == "button" and n["name"] == "Connected" and n.get("disabled")
                    for n in nodes
                )

            assert await eventually(connected, timeout=30)
            await ok(agent, "mm_cleanup", {})
