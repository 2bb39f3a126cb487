"""The same behaviour on both generations of MetaMask's records: `0001-mm_click.json` with
prefixed tools, and `20260115-120000-123-click.json` with bare ones, context and launch."""

from datetime import timedelta

import pytest

from engine import (
    DuplicatesInput,
    LastInput,
    ScreenContext,
    SessionsInput,
    SummarizeInput,
    TimelineInput,
)
from tests.compat.mm_format import Act, Format, Session, write
from tests.compat.scenarios import CONFIRM, HOME, RECIPIENT, SEND, send_flow
from tests.conftest import FIXED_NOW, Knowledge

FORMATS: list[Format] = ["old", "new"]


def bare(tool: str) -> str:
    return tool.removeprefix("mm_")


@pytest.fixture(params=FORMATS)
def fmt(request: pytest.FixtureRequest) -> Format:
    return request.param  # type: ignore[no-any-return]


def test_search_finds_a_typed_field_with_its_evidence(kb: Knowledge, fmt: Format) -> None:
    ids = write(kb.root, send_flow("mm-send-a"), fmt)
    page = kb.search("send amount input")
    top = page.steps()[0]
    assert top.stepId == ids[4]
    assert bare(top.tool) == "type"
    assert top.target == {"testId": "send-amount-input"}
    assert "testId:send-amount-input" in (top.matchedFields or [])
    assert top.sessionGoal == "Send 0.1 ETH to another account"


@pytest.mark.parametrize("tool", ["click", "mm_click"])
def test_the_tool_filter_treats_prefixed_and_bare_names_as_one(
    kb: Knowledge, fmt: Format, tool: str
) -> None:
    ids = write(kb.root, send_flow("mm-send-a"), fmt)
    page = kb.search("button", filters={"tool": tool}, limit=50)
    assert {r.stepId for r in page.steps()} == {ids[2], ids[5], ids[6]}


def test_last_lists_the_newest_steps_in_order(kb: Knowledge, fmt: Format) -> None:
    ids = write(kb.root, send_flow("mm-send-a"), fmt)
    listed = kb.engine().last(LastInput(n=3, scope="all"))
    assert [s.stepId for s in listed.steps] == ids[-3:]
    assert listed.total == len(ids)


def test_summarize_tells_the_recipe(kb: Knowledge, fmt: Format) -> None:
    ids = write(kb.root, send_flow("mm-send-a"), fmt)
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-send-a"}))
    assert recipe.screens == ["home", "send", "confirm-transaction", "home"]
    assert [(bare(a.tool), a.target, a.text) for a in recipe.actions] == [
        ("click", "testId:coin-overview-send", None),
        ("type", "testId:recipient-address-input", RECIPIENT),
        ("type", "testId:send-amount-input", "0.1"),
        ("click", "testId:send-continue-button", None),
        ("click", "testId:confirm-footer-button", None),
    ]
    assert [a.stepId for a in recipe.actions] == ids[2:]
    assert recipe.session.stepCount == 7
    assert recipe.failures == []


def test_a_failure_and_its_recovery(kb: Knowledge, fmt: Format) -> None:
    session = Session("mm-retry-a", FIXED_NOW - timedelta(hours=3), flow_tags=["send"])
    session.step(Act("describe_screen"), HOME)
    session.step(
        Act("click", test_id="send-button"),
        HOME,
        ok=False,
        error=("MM_TARGET_NOT_FOUND", "Element not found: send-button"),
    )
    session.step(Act("click", test_id="coin-overview-send"), SEND)
    ids = write(kb.root, session, fmt)
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-retry-a"}))
    [failure] = recipe.failures
    assert failure.stepId == ids[1]
    assert failure.errorCode == "MM_TARGET_NOT_FOUND"
    assert failure.recoveredBy is not None and failure.recoveredBy.stepId == ids[2]


def test_timeline_shows_the_neighbours_in_order(kb: Knowledge, fmt: Format) -> None:
    ids = write(kb.root, send_flow("mm-send-a"), fmt)
    line = kb.engine().timeline(TimelineInput(anchor=ids[3], before=2, after=2))
    assert [s.stepId for s in line.before] == ids[1:3]
    assert line.anchor.stepId == ids[3]
    assert [s.stepId for s in line.after] == ids[4:6]


def test_prior_knowledge_suggests_what_worked_on_this_screen(kb: Knowledge, fmt: Format) -> None:
    write(kb.root, send_flow("mm-send-a"), fmt)
    write(kb.root, Session("mm-send-b", FIXED_NOW - timedelta(hours=1)), fmt)
    prior = kb.engine().prior_knowledge(
        ScreenContext(
            screen="send",
            url=SEND.url,
            test_ids=[t for t, _ in SEND.test_ids],
            a11y=[(n.role, n.name) for n in SEND.nodes],
            session_id="mm-send-b",
        )
    )
    suggested = [(s.action, s.preferredTarget.value) for s in prior.suggestedNextActions]
    assert suggested[:2] == [("type", "recipient-address-input"), ("type", "send-amount-input")]


def test_a_renamed_testid_supersedes_the_old_steps(kb: Knowledge, fmt: Format) -> None:
    old = write(kb.root, send_flow("mm-old-ui", hours_ago=50), fmt)
    renamed = type(HOME)(
        HOME.name,
        HOME.url,
        [("wallet-send-button", "Send"), ("coin-overview-swap", "Swap")],
        HOME.nodes,
    )
    later = Session("mm-new-ui", FIXED_NOW - timedelta(hours=2), flow_tags=["send"])
    later.step(Act("describe_screen"), renamed)
    later.step(Act("describe_screen"), renamed)
    later.step(Act("click", test_id="wallet-send-button"), SEND)
    new = write(kb.root, later, fmt)
    kb.index()
    found, _ = kb.store.read_decisions("mm-old-ui")
    [(stem, decision)] = found.items()
    assert f"mm-old-ui/{stem}" == old[2]
    assert decision.evidence == "renamed"
    assert decision.supersededBy is not None and decision.supersededBy.stepId == new[2]


def test_duplicate_sessions_are_grouped(kb: Knowledge, fmt: Format) -> None:
    first = write(kb.root, send_flow("mm-send-a", hours_ago=30), fmt)
    second = write(kb.root, send_flow("mm-send-b", hours_ago=20), fmt)
    found = kb.engine().find_duplicates(DuplicatesInput(types=["step"], limit=100))
    groups = [set(g.examples) for g in found.groups]
    assert any({first[4], second[4]} <= g for g in groups)  # the typed amount, twice


def test_sessions_are_listed_with_their_metadata(kb: Knowledge, fmt: Format) -> None:
    write(kb.root, send_flow("mm-send-a", hours_ago=30), fmt)
    write(kb.root, send_flow("mm-send-b", hours_ago=20), fmt)
    listed = kb.engine().sessions(SessionsInput(filters={"flowTag": "send"}))
    assert [s.sessionId for s in listed.sessions] == ["mm-send-b", "mm-send-a"]
    assert all(s.stepCount == 7 and s.goal for s in listed.sessions)


def test_the_confirm_screen_click_is_labelled_a_confirmation(kb: Knowledge, fmt: Format) -> None:
    ids = write(kb.root, send_flow("mm-send-a"), fmt)
    page = kb.search("confirm", filters={"screen": CONFIRM.name})
    row = next(r for r in page.steps() if r.stepId == ids[6])
    assert set(row.labels) >= {"interaction", "confirmation"}
