"""Step file names of both forms, `0001-mm_click.json` and `20260115-120000-123-click.json`:
order, ids, `last`, timelines, and the name knowhow's own writer picks in such a root."""

import json
import re
from datetime import timedelta

from engine import LastInput, SummarizeInput, TimelineInput
from engine.records import Observation, Outcome, ScreenState, StepRecord, StepTarget, ToolCall
from tests.compat.mm_format import Session, write_new, write_old
from tests.compat.scenarios import HOME, SEND, send_flow
from tests.conftest import FIXED_NOW, Knowledge, iso

STAMPED = re.compile(r"\d{8}-\d{6}-\d{3}-")


def record(session_id: str, at_hours_ago: float, tool: str = "mm_click") -> StepRecord:
    return StepRecord(
        timestamp=iso(FIXED_NOW - timedelta(hours=at_hours_ago)),
        sessionId=session_id,
        tool=ToolCall(name=tool, target=StepTarget(testId="coin-overview-send")),
        outcome=Outcome(ok=True),
        observation=Observation(state=ScreenState(currentScreen="send")),
    )


def test_a_session_mixing_both_forms_is_ordered_by_time(kb: Knowledge) -> None:
    """Two numbered steps, then two stamped ones written between and after them: the session
    reads in the order the steps were taken."""
    session = send_flow("mm-mixed-a", hours_ago=30)
    numbered = write_old(kb.root, Session(session.session_id, session.created, session.items[:4]))
    later = Session(session.session_id, session.created + timedelta(seconds=15), session.items[4:])
    later.interval = timedelta(seconds=20)  # +35, +55, +75 s; the numbered ones +10..+40 s
    stamped = write_new(kb.root, later)
    times = {
        sid: json.loads(
            (kb.root / "mm-mixed-a" / "steps" / f"{sid.split('/')[1]}.json").read_text()
        )["timestamp"]
        for sid in numbered + stamped
    }
    expected = sorted(numbered + stamped, key=lambda sid: times[sid])
    assert expected != numbered + stamped  # the forms interleave in time
    listed = kb.engine().last(LastInput(n=50, scope={"sessionId": "mm-mixed-a"}))
    assert [s.stepId for s in listed.steps] == expected
    line = kb.engine().timeline(TimelineInput(anchor=expected[3], before=3, after=3))
    assert [s.stepId for s in line.before] == expected[:3]
    assert [s.stepId for s in line.after] == expected[4:7]
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-mixed-a"}))
    assert [a.stepId for a in recipe.actions] == [
        s for s in expected if "click" in s or "type" in s
    ]


def test_knowhow_records_with_timestamp_names_into_a_session_that_uses_them(kb: Knowledge) -> None:
    ids = write_new(kb.root, send_flow("mm-stamped-a", hours_ago=2))
    step_id = kb.store.record_step(record("mm-stamped-a", 0.5))
    stem = step_id.split("/", 1)[1]
    assert STAMPED.match(stem) and stem.endswith("-mm_click")
    assert stem > ids[-1].split("/", 1)[1]
    listed = kb.engine().last(LastInput(n=2, scope={"sessionId": "mm-stamped-a"}))
    assert [s.stepId for s in listed.steps] == [ids[-1], step_id]


def test_stamped_names_stay_in_order_when_the_clock_goes_back(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-stamped-a", hours_ago=2))
    first = kb.store.record_step(record("mm-stamped-a", 0.5))
    second = kb.store.record_step(record("mm-stamped-a", 1.5))  # recorded later, stamped earlier
    assert second.split("/", 1)[1] > first.split("/", 1)[1]


def test_a_new_session_follows_the_root_naming(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-stamped-a", hours_ago=2))
    step_id = kb.store.record_step(record("mm-fresh-a", 0.5))
    assert STAMPED.match(step_id.split("/", 1)[1])


def test_a_root_of_numbered_sessions_keeps_numbers(kb: Knowledge) -> None:
    write_old(kb.root, send_flow("mm-numbered-a", hours_ago=2))
    assert kb.store.record_step(record("mm-numbered-a", 0.5)) == "mm-numbered-a/0008-mm_click"
    assert kb.store.record_step(record("mm-fresh-a", 0.5)) == "mm-fresh-a/0001-mm_click"


def test_numbered_steps_past_9999_keep_their_order(kb: Knowledge) -> None:
    kb.session("mm-long-a", hours_ago=3)
    steps = kb.root / "mm-long-a" / "steps"
    steps.mkdir(parents=True)
    for number, minutes in ((9998, 1), (9999, 2), (10000, 3), (10001, 4)):
        data = record("mm-long-a", 2 - minutes / 60).model_dump_json(exclude_none=True)
        (steps / f"{number:04d}-mm_click.json").write_text(data)
    listed = kb.engine().last(LastInput(n=10, scope={"sessionId": "mm-long-a"}))
    assert [s.stepId.split("/")[1][:5] for s in listed.steps] == [
        "9998-",
        "9999-",
        "10000",
        "10001",
    ]
    assert kb.store.record_step(record("mm-long-a", 1)) == "mm-long-a/10002-mm_click"


def test_step_ids_of_both_forms_are_accepted_everywhere(kb: Knowledge) -> None:
    new = write_new(kb.root, send_flow("mm-new-a", hours_ago=2))
    old = write_old(kb.root, send_flow("mm-old-a", hours_ago=3))
    engine = kb.engine()
    for anchor in (new[3], old[3]):
        line = engine.timeline(TimelineInput(anchor=anchor, before=1, after=1))
        assert line.anchor.stepId == anchor
    assert kb.store.has_step(new[0]) and kb.store.has_step(old[0])


def test_the_same_screen_order_for_a_stamped_session(kb: Knowledge) -> None:
    write_new(kb.root, send_flow("mm-new-a", hours_ago=2))
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": "mm-new-a"}))
    assert recipe.screens == [HOME.name, SEND.name, "confirm-transaction", HOME.name]
    assert recipe.skipped == []
    assert recipe.warnings == []
    assert kb.index().warnings == []
