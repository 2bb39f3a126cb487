"""The web page's charts count from the index: steps and failures per day and flow, failures
per screen, the targets that fail most; the window ends on the newest step's day."""

from datetime import timedelta

from engine.history import count_activity
from engine.index import supersede
from tests.conftest import FIXED_NOW, Knowledge

NOT_FOUND = ("MM_TARGET_NOT_FOUND", "Element not found")


def test_activity_counts_days_flows_screens_and_failing_targets(kb: Knowledge) -> None:
    kb.session("mm-swap-1", flow_tags=["swap"])
    day_one = FIXED_NOW - timedelta(days=2)
    kb.step("mm-swap-1", test_id="swap-go", screen="swap", at=day_one)
    kb.step("mm-swap-1", test_id="swap-go", screen="swap", ok=False, error=NOT_FOUND, at=day_one)
    kb.session("mm-send-1", flow_tags=["send"])
    for minute in range(3):
        at = FIXED_NOW + timedelta(minutes=minute)
        kb.step(
            "mm-send-1",
            test_id="send-go",
            screen="send",
            ok=minute > 0,
            error=None if minute else NOT_FOUND,
            at=at,
        )
    kb.step("mm-send-1", test_id="old-thing", screen="send", at=FIXED_NOW - timedelta(days=90))
    engine = kb.engine()
    reader = engine.reader
    counted = count_activity(reader.searcher(), reader.schema, days=7)
    assert counted is not None
    assert counted.firstDay == (FIXED_NOW - timedelta(days=6)).date().isoformat()
    assert counted.steps == 5  # the step 90 days before is outside the window
    flows = {f.flow: f for f in counted.flows}
    assert [f.flow for f in counted.flows] == ["send", "swap"]  # busiest first
    assert flows["send"].steps == [0, 0, 0, 0, 0, 0, 3] and flows["send"].failed[-1] == 1
    assert flows["swap"].steps[-3] == 2 and flows["swap"].failed[-3] == 1
    assert {(s.screen, s.failed, s.steps) for s in counted.screens} == {
        ("send", 1, 3),
        ("swap", 1, 2),
    }
    assert {(t.screen, t.target, t.failed) for t in counted.targets} == {
        ("send", "testId: send-go", 1),
        ("swap", "testId: swap-go", 1),
    }
    assert counted.failuresRead == 2
    assert counted.superseded == 0 and counted.supersededDays == []


def test_activity_says_when_steps_were_superseded(kb: Knowledge) -> None:
    kb.session("mm-hand", flow_tags=["send"])
    first = kb.step("mm-hand", test_id="a-button")
    kb.step("mm-hand", test_id="b-button")
    decision = supersede(kb.store, first, None, "the a-button moved")
    reader = kb.engine().reader
    counted = count_activity(reader.searcher(), reader.schema)
    assert counted is not None and counted.superseded == 1
    [day] = counted.supersededDays
    assert day.count == 1 and day.day == decision.supersededAt[:10]


def test_an_index_without_steps_has_no_activity(kb: Knowledge) -> None:
    kb.session("mm-empty")
    engine = kb.engine()
    assert engine.activity() is None
