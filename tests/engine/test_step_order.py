"""The order of a session's steps: by number past 9,999, never by tool name, and atomic
numbering when several processes record into one session at once.

Step files are `<number>-<tool>.json`; `10000-…` sorts before `9999-…` as a string, so an
order by name puts a long session's newest steps in its middle (timeline, summarize) and made
every new step look inserted before the indexed ones (the whole session indexed again).
"""

import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import orjson
import pytest

from engine.core import LastInput, SummarizeInput, TimelineInput
from engine.index import AppendCache, IndexLayout, IndexWriter, rebuild, sync_sessions
from engine.records import frontier, name_order, newest
from tests.conftest import FIXED_NOW, Knowledge, iso

REPO = Path(__file__).resolve().parents[2]
LONG = "mm-long-session"


def write_numbered(kb: Knowledge, session_id: str, numbers: list[int], screen_of=str) -> None:  # type: ignore[no-untyped-def]
    """Step files with these numbers, one minute apart in number order (written directly: ten
    thousand recorded steps would make a slow test of a naming rule)."""
    steps = kb.root / session_id / "steps"
    steps.mkdir(parents=True, exist_ok=True)
    start = FIXED_NOW - timedelta(hours=2)
    for position, number in enumerate(sorted(numbers)):
        record = kb.record(
            session_id,
            test_id=f"button-{number}",
            screen=screen_of(number),
            at=start + timedelta(minutes=position),
        )
        name = f"{number:04d}-mm_click.json"
        (steps / name).write_bytes(record.model_dump_json(exclude_none=True).encode())


def stem(step_id: str) -> str:
    return step_id.split("/", 1)[1]


def test_steps_past_9999_keep_their_order_in_timeline_and_summary(kb: Knowledge) -> None:
    kb.session(LONG, hours_ago=3)
    numbers = [1, 2, 9998, 9999, 10000, 10001]
    write_numbered(kb, LONG, numbers, screen_of=lambda n: f"screen-{n}")
    engine = kb.engine()

    line = engine.timeline(TimelineInput(anchor=f"{LONG}/10000-mm_click", before=3, after=3))
    assert [stem(s.stepId) for s in line.before] == [
        "0002-mm_click",
        "9998-mm_click",
        "9999-mm_click",
    ]
    assert [stem(s.stepId) for s in line.after] == ["10001-mm_click"]

    recipe = engine.summarize(SummarizeInput(scope={"sessionId": LONG}))
    assert recipe.screens == [f"screen-{n}" for n in numbers]
    assert [stem(a.stepId) for a in recipe.actions][-1] == "10001-mm_click"

    newest = engine.last(LastInput(n=2, scope={"sessionId": LONG}))
    assert [stem(s.stepId) for s in newest.steps] == ["10000-mm_click", "10001-mm_click"]


def test_a_new_step_of_a_long_session_is_appended_not_the_session_indexed_again(
    kb: Knowledge,
) -> None:
    """Also by a writer that did not index the session itself (a server started after the
    index was built): it appends what a whole re-index would add, document for document."""
    kb.session(LONG, hours_ago=3)
    write_numbered(kb, LONG, [9998, 9999, 10000], screen_of=lambda n: f"screen-{n}")
    kb.index()
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None
    step_id = kb.step(LONG, test_id="send-button", test_ids=[("send-button", "Send")])
    assert stem(step_id) == "10001-mm_click"
    writer = IndexWriter(generation)
    try:
        report = sync_sessions(kb.store, writer, [LONG], AppendCache())
    finally:
        writer.close()
    assert report.appended == {LONG}
    assert report.steps_indexed == 1
    appended = kb.engine().last(LastInput(n=1, scope={"sessionId": LONG})).steps[0]
    rebuild(kb.store, kb.index_dir)
    whole = kb.engine().last(LastInput(n=1, scope={"sessionId": LONG})).steps[0]
    assert appended.stepId == whole.stepId == step_id
    assert appended.model_dump() == whole.model_dump()


def test_steps_sharing_a_number_are_ordered_by_time_not_by_tool_name(kb: Knowledge) -> None:
    """Two recorders that picked the same number (files written before numbering was atomic,
    or by another program): the step taken first comes first, whatever its tool is called."""
    kb.session("mm-tied-numbers", hours_ago=3)
    steps = kb.root / "mm-tied-numbers" / "steps"
    steps.mkdir(parents=True)
    start = FIXED_NOW - timedelta(hours=2)
    for name, tool, seconds in (
        ("0001-mm_describe_screen", "mm_describe_screen", 0),
        ("0002-mm_type", "mm_type", 10),
        ("0002-mm_click", "mm_click", 20),
        ("0003-mm_click", "mm_click", 30),
    ):
        record = kb.record(
            "mm-tied-numbers", tool, test_id="x", at=start + timedelta(seconds=seconds)
        )
        (steps / f"{name}.json").write_bytes(record.model_dump_json(exclude_none=True).encode())
    engine = kb.engine()
    listed = engine.last(LastInput(n=10, scope={"sessionId": "mm-tied-numbers"}))
    assert [stem(s.stepId) for s in listed.steps] == [
        "0001-mm_describe_screen",
        "0002-mm_type",
        "0002-mm_click",
        "0003-mm_click",
    ]
    line = engine.timeline(TimelineInput(anchor="mm-tied-numbers/0002-mm_click", before=1, after=1))
    assert [stem(s.stepId) for s in line.before] == ["0002-mm_type"]


RECORDER = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from engine.records import KnowledgeStore, Outcome, StepRecord, StepTarget, ToolCall, now_iso

    root, session_id, tool, count = Path(sys.argv[1]), sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = KnowledgeStore(root)
    sys.stdin.readline()  # start together
    for number in range(count):
        record = StepRecord(
            timestamp="2000-01-01T00:00:00.000Z",
            sessionId=session_id,
            tool=ToolCall(name=tool, target=StepTarget(testId=f"{tool}-{number}")),
            outcome=Outcome(ok=True),
        )
        store.record_step(record, stamp=now_iso)
    """
)


def test_processes_recording_into_one_session_never_share_a_step_number(kb: Knowledge) -> None:
    """Four processes, four tools (so names never collide), 25 steps each, started together:
    every step its own number, and the numbers in the order of the times stamped."""
    session_id = kb.session("mm-crowded", hours_ago=1)
    recorders = [
        subprocess.Popen(
            [sys.executable, "-c", RECORDER, str(kb.root), session_id, tool, "25"],
            cwd=REPO,
            stdin=subprocess.PIPE,
        )
        for tool in ("mm_click", "mm_type", "mm_wait_for", "mm_navigate")
    ]
    for recorder in recorders:
        assert recorder.stdin is not None
        recorder.stdin.write(b"go\n")
        recorder.stdin.close()
    for recorder in recorders:
        assert recorder.wait(120) == 0
    files = sorted((kb.root / session_id / "steps").iterdir())
    numbers = [int(path.name.split("-", 1)[0]) for path in files]
    assert len(files) == 100
    assert sorted(numbers) == list(range(1, 101))
    by_number = sorted(files, key=lambda path: int(path.name.split("-", 1)[0]))
    times = [orjson.loads(path.read_bytes())["timestamp"] for path in by_number]
    assert times == sorted(times), "a later number was stamped earlier"
    assert all(time > iso(FIXED_NOW - timedelta(days=3650)) for time in times)


NAMES = [
    "0001-mm_click.json",
    "0002-mm_type.json",
    "9999-mm_click.json",
    "10000-mm_describe_screen.json",
    "0040-mm_click.json",
    "0040-mm_wait_for.json",
]


@pytest.mark.parametrize("count", [0, 1, 2, 3, 6, 10])
def test_the_newest_names_are_the_last_of_the_name_order(count: int) -> None:
    ordered = name_order(NAMES)
    assert ordered is not None and ordered[-2:] == NAMES[2:4]
    assert newest(NAMES, count) == ordered[max(0, len(ordered) - count) :]
    assert newest([*NAMES, "click.json"], count) is None  # a name of neither form


def test_new_names_follow_a_session_only_after_its_last_one() -> None:
    known = frontier(NAMES)
    assert known is not None
    assert known.admits(["10001-mm_click.json", "10002-mm_click.json"])
    assert not known.admits(["9998-mm_click.json"])  # before indexed steps: re-index
    assert not known.admits(["20260115-120000-123-click.json"])  # another form
    assert known.extended(["10001-mm_click.json"]).admits(["10002-mm_click.json"])
    assert not known.extended(["10001-mm_click.json"]).admits(["10001-mm_type.json"])
    assert frontier([*NAMES, "20260115-120000-123-click.json"]) is None
