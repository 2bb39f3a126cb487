"""Today's tools and fields: new tool names and their labels, `context`, `launch`, and
diff-mode observations (the added nodes seen, the removed ones gone)."""

from datetime import timedelta

import pytest

from engine import LastInput, ScreenContext, SessionsInput, SummarizeInput, validate
from tests.compat.mm_format import Act, Node, Screen, Session, write_new, write_old
from tests.compat.scenarios import CONFIRM, HOME, send_flow
from tests.conftest import FIXED_NOW, Knowledge

DAPP = Screen(
    "test-dapp",
    "http://127.0.0.1:8080/",
    [("connectButton", "Connect"), ("sendButton", "Send")],
    [Node("e1", "button", "Connect"), Node("e2", "button", "Send")],
)


def tools_session() -> Session:
    session = Session("mm-tools-a", FIXED_NOW - timedelta(hours=3), flow_tags=["connect"])
    session.step(Act("build", args={"buildType": "build:test"}), None)
    session.step(Act("seed_contract", args={"contractName": "hst"}), None)
    session.step(Act("mock_network", args={"action": "clear"}), None)
    session.step(Act("cdp", args={"method": "Network.enable", "timeoutMs": 30000}), None)
    session.step(Act("set_context", args={"context": "e2e"}), None)
    session.step(Act("launch", args={"stateMode": "default"}), HOME)
    session.step(Act("switch_to_tab", args={"role": "dapp"}), DAPP)
    session.step(Act("click", test_id="connectButton"), DAPP)
    session.step(Act("wait_for_notification"), CONFIRM)
    session.step(Act("get_text", test_id="confirm-footer-button"), CONFIRM)
    session.step(Act("close_tab", args={"role": "notification"}), DAPP)
    return session


@pytest.mark.parametrize(
    ("tool", "labels"),
    [
        ("switch_to_tab", {"navigation"}),
        ("close_tab", {"navigation"}),
        ("wait_for_notification", {"navigation", "confirmation"}),
        ("mock_network", {"setup"}),
        ("seed_contract", {"setup"}),
        ("cdp", {"setup"}),
        ("build", {"setup"}),
        ("set_context", {"setup"}),
        ("get_text", {"discovery"}),
    ],
)
def test_new_tools_get_sensible_labels(kb: Knowledge, tool: str, labels: set[str]) -> None:
    write_new(kb.root, tools_session())
    for name in (tool, f"mm_{tool}"):
        page = kb.engine().last(
            validate(LastInput, {"n": 50, "scope": "all", "filters": {"tool": name}})
        )
        assert [set(s.labels) for s in page.steps] == [labels], name


def test_setup_steps_are_never_suggested_or_similar(kb: Knowledge) -> None:
    write_new(kb.root, tools_session())
    prior = kb.engine().prior_knowledge(
        ScreenContext(screen="test-dapp", url=DAPP.url, test_ids=["connectButton"], session_id="x")
    )
    setup = {"build", "seed_contract", "mock_network", "cdp", "set_context"}
    assert prior.similarSteps and not {s.tool for s in prior.similarSteps} & setup
    assert [s.preferredTarget.value for s in prior.suggestedNextActions] == ["connectButton"]


def test_summaries_keep_setup_and_leave_out_what_only_read(kb: Knowledge) -> None:
    write_new(kb.root, tools_session())
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-tools-a"}))
    assert [a.tool for a in recipe.actions] == [
        "build",
        "seed_contract",
        "mock_network",
        "cdp",
        "set_context",
        "switch_to_tab",
        "click",
        "wait_for_notification",
        "close_tab",
    ]


def test_context_filters_steps(kb: Knowledge) -> None:
    prod = write_new(kb.root, send_flow("mm-prod-a", context="prod"))
    e2e = write_new(kb.root, send_flow("mm-e2e-a", context="e2e", hours_ago=20))
    write_old(kb.root, send_flow("mm-old-a", hours_ago=10))
    page = kb.search("send amount", filters={"context": "prod"}, limit=50)
    assert {r.stepId for r in page.steps()} <= set(prod)
    assert page.steps() and all(r.context == "prod" for r in page.steps())
    listed = kb.engine().last(validate(LastInput, {"scope": "all", "filters": {"context": "e2e"}}))
    assert [s.stepId for s in listed.steps] == e2e


def test_a_context_other_than_e2e_or_prod_is_refused() -> None:
    from engine import InvalidInput

    with pytest.raises(InvalidInput) as raised:
        validate(LastInput, {"filters": {"context": "staging"}})
    assert raised.value.field == "filters.context"


def test_launch_state_is_shown_and_filterable(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-onboard-a", state_mode="onboarding", hours_ago=5))
    write_new(
        kb.root,
        send_flow("mm-custom-a", state_mode="custom", fixture_preset="withTokens", hours_ago=4),
    )
    write_old(kb.root, send_flow("mm-old-a", hours_ago=3))
    listed = kb.engine().sessions(SessionsInput(limit=10))
    shown = {s.sessionId: (s.stateMode, s.fixturePreset) for s in listed.sessions}
    assert shown == {
        "mm-onboard-a": ("onboarding", None),
        "mm-custom-a": ("custom", "withTokens"),
        "mm-old-a": (None, None),
    }
    only = kb.engine().sessions(validate(SessionsInput, {"filters": {"stateMode": "custom"}}))
    assert [s.sessionId for s in only.sessions] == ["mm-custom-a"]
    preset = kb.search("send", filters={"fixturePreset": "withTokens"}, limit=50)
    assert {r.sessionId for r in preset.steps()} == {"mm-custom-a"}
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-custom-a"}))
    assert (recipe.session.stateMode, recipe.session.fixturePreset) == ("custom", "withTokens")


def test_diff_observations_count_added_nodes_as_seen_and_removed_as_gone(kb: Knowledge) -> None:
    toast = Node("e9", "status", "Transaction submitted")
    home_with_toast = Screen(HOME.name, HOME.url, HOME.test_ids, [*HOME.nodes, toast])
    home_without_heading = Screen(HOME.name, HOME.url, HOME.test_ids, HOME.nodes[:3])
    session = Session("mm-diff-a", FIXED_NOW - timedelta(hours=3))
    session.step(Act("click", test_id="account-menu-icon"), HOME)
    session.step(Act("click", test_id="coin-overview-swap"), home_with_toast)
    session.step(Act("click", test_id="coin-overview-send"), home_without_heading)
    ids = write_new(kb.root, session, diff=True)
    raw = (kb.root / "mm-diff-a" / "steps" / f"{ids[1].split('/')[1]}.json").read_text()
    assert '"added": [\n' in raw and '"e9"' in raw  # written in diff mode

    submitted = kb.search("transaction submitted", mode="keyword")
    assert [r.stepId for r in submitted.steps()] == [ids[1]]
    # The nodes a diff left unchanged are still on screen: the heading is seen at the second
    # step; the third step's diff removed it.
    tokens = kb.search("tokens heading", mode="keyword", filters={"tool": "click"})
    assert {r.stepId for r in tokens.steps()} == {ids[0], ids[1]}


def test_unknown_fields_are_kept(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-send-a"))
    loaded = kb.store.load_session("mm-send-a")
    assert loaded.metadata.launch is not None
    assert loaded.metadata.launch["ports"] == {"anvil": 8545, "fixtureServer": 12345}
    assert loaded.steps[0].record.model_extra is not None
    assert loaded.steps[0].record.model_extra["environment"]["nodeVersion"] == "v20.11.1"
    assert loaded.steps[0].record.context == "e2e"


def test_any_prefix_is_the_same_action(kb: Knowledge) -> None:
    """knowhow's own tools carry the prefix its server was given (`--tool-prefix app_`)."""
    session = Session("mm-prefix-a", FIXED_NOW - timedelta(hours=3))
    session.step(Act("switch_to_tab", args={"role": "dapp"}), DAPP)
    ids = write_new(kb.root, session)
    step = kb.root / "mm-prefix-a" / "steps" / f"{ids[0].split('/')[1]}.json"
    step.write_text(step.read_text().replace('"switch_to_tab"', '"app_switch_to_tab"'))
    for name in ("switch_to_tab", "mm_switch_to_tab", "app_switch_to_tab"):
        listed = kb.engine().last(validate(LastInput, {"scope": "all", "filters": {"tool": name}}))
        assert [(s.tool, s.labels) for s in listed.steps] == [("app_switch_to_tab", ["navigation"])]
