"""priorKnowledge speaks the action tools' language: a suggestion's `target` (and each of its
`fallbacks`) is exactly the arguments `mm_click`, `mm_type` and `mm_wait_for` take to find the
element, `{"testId": …}`, `{"selector": …}` or `{"a11yHint": {"role", "name"}}`, so an agent
passes it on as it is. `preferredTarget` / `fallbackTargets` (`{"type", "value"}`) stay one more
release for the agents that read them.
"""

from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from pydantic import ValidationError

from engine import KnowledgeEngine, SearchInput, validate
from engine.records import A11yHint
from server.app import create_server
from server.browser.inputs import ClickInput, TypeInput
from server.settings import ServerSettings
from tests.conftest import Knowledge
from tests.engine.test_prior import SEND_A11Y, SEND_IDS, record_send_flow, send_screen
from tests.server.mcp_helpers import call


def suggestions(kb: Knowledge, session_id: str, **screen: Any) -> list[dict[str, Any]]:
    prior = kb.engine().prior_knowledge(send_screen(session_id, **screen))
    found = prior.to_json_dict()["suggestedNextActions"]
    assert found, prior
    return list(found)


def check_action_shape(suggestion: dict[str, Any]) -> None:
    old = suggestion["preferredTarget"]
    assert suggestion["target"] == {old["type"]: old["value"]}
    model = TypeInput if suggestion["action"] == "type" else ClickInput
    extra = {"text": "0.1"} if suggestion["action"] == "type" else {}
    model.model_validate({**suggestion["target"], **extra})  # taken as it is
    fallbacks = suggestion.get("fallbacks", [])
    assert fallbacks == [{t["type"]: t["value"]} for t in suggestion.get("fallbackTargets", [])]
    for fallback in fallbacks:
        model.model_validate({**fallback, **extra})


def test_a_suggestion_target_is_what_the_action_tools_take(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5, flow_tags=["send"])
    found = suggestions(kb, "mm-agent-b")
    assert found[0]["target"] in (
        {"testId": "recipient-address-input"},
        {"testId": "send-amount-input"},
    )
    for suggestion in found:
        check_action_shape(suggestion)


def test_a_renamed_testid_suggests_the_role_and_name_as_mm_click_takes_them(
    kb: Knowledge,
) -> None:
    kb.session("mm-agent-a", hours_ago=30, flow_tags=["send"])
    kb.step("mm-agent-a", "mm_describe_screen", screen="send", test_ids=SEND_IDS, a11y=SEND_A11Y)
    record = kb.record("mm-agent-a", "mm_type", test_id="recipient-address-input", screen="send")
    assert record.tool.target is not None
    record.tool.target.a11yHint = A11yHint(role="textbox", name="Recipient address")
    kb.store.record_step(record)
    renamed = ["send-to-address-field", "send-value-field"]
    found = suggestions(kb, "mm-agent-b", test_ids=renamed)
    hint = {"a11yHint": {"role": "textbox", "name": "Recipient address"}}
    recipient = next(s for s in found if s["target"] == hint)
    assert {"testId": "recipient-address-input"} in recipient["fallbacks"]
    for suggestion in found:
        check_action_shape(suggestion)


def test_a_search_results_target_with_role_and_name_is_taken_as_it_is(
    sample: KnowledgeEngine,
) -> None:
    page = sample.search(validate(SearchInput, {"query": "send button", "limit": 20}))
    targets = [step.target for step in page.steps() if step.target]
    assert any("role" in target and "name" in target for target in targets)
    for target in targets:
        ClickInput.model_validate(target)
        TypeInput.model_validate({**target, "text": "0.1"})


def test_role_and_name_alone_are_the_element_with_that_role_and_name() -> None:
    alone = ClickInput.model_validate({"role": "button", "name": "Send"})
    assert alone.step_target().a11yHint == A11yHint(role="button", name="Send")
    beside = ClickInput.model_validate({"testId": "eth-overview-send", "role": "button"})
    assert beside.testId == "eth-overview-send" and beside.a11yHint is None
    for half in ({"role": "button"}, {"name": "Send"}, {"role": "no-such-role", "name": "x"}):
        with pytest.raises(ValidationError):
            ClickInput.model_validate(half)


def test_an_avoid_entry_has_the_action_tools_shape(kb: Knowledge) -> None:
    record_send_flow(kb, "mm-agent-a")
    kb.session("mm-agent-b", hours_ago=0.5)
    for _ in range(2):
        kb.not_found("mm-agent-b", "ens-input", "mm_type", screen="send")
    avoid = kb.engine().prior_knowledge(send_screen("mm-agent-b")).to_json_dict()["avoid"]
    assert [entry["target"] for entry in avoid] == [{"testId": "ens-input"}]
    TypeInput.model_validate({**avoid[0]["target"], "text": "x"})


@pytest.mark.anyio
async def test_mm_click_takes_a_search_results_target(tmp_path: Path) -> None:
    """Over MCP, before any browser: the target is read, not refused as extra input."""
    settings = ServerSettings(root=tmp_path / "root", index=tmp_path / "index")
    (tmp_path / "root").mkdir()
    target = {"testId": "eth-overview-send", "role": "button", "name": "Send"}
    async with Client(create_server(settings)) as client:
        for tool, extra in (("mm_click", {}), ("mm_type", {"text": "0.1"})):
            answer = await call(client, tool, target | extra)
            assert answer["ok"] is False
            assert answer["error"]["code"] != "MM_INVALID_INPUT", answer
