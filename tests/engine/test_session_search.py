"""Session search (`types: ["session"]`) counts sessions exactly, also when two were created in
the same millisecond (sessions are told apart by their createdAt first)."""

from engine.core import SearchInput, validate
from tests.conftest import Knowledge


def test_a_shared_created_at_does_not_count_a_session_without_a_match(kb: Knowledge) -> None:
    kb.session("mm-bridge", hours_ago=2, goal="Bridge ETH to Linea", flow_tags=["bridge"])
    kb.step("mm-bridge", test_id="eth-overview-bridge", screen="bridge")
    kb.session("mm-twin", hours_ago=2, goal="Change the display language")
    kb.step("mm-twin", test_id="locale-select", screen="settings")
    kb.session("mm-later", hours_ago=1, goal="Bridge again", flow_tags=["bridge"])
    kb.step("mm-later", test_id="bridge-cta-button", screen="bridge")
    kb.index()
    request = {"query": "bridge", "mode": "keyword", "types": ["session"]}
    page = kb.engine().search(validate(SearchInput, request))
    assert page.total == 2 and not page.hasMore
    assert {row.sessionId for row in page.sessions()} == {"mm-bridge", "mm-later"}
    both = kb.engine().search(validate(SearchInput, request | {"query": "bridge language"}))
    assert both.total == 3
