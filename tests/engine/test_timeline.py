"""Timelines around a step and the session context of steps, read from a real index."""

from datetime import datetime, timedelta

import orjson
import pytest

from engine import KnowledgeEngine
from engine.core import NotFound, SearchInput, StepSummary, validate
from engine.history import TimelineResult, step_context, timeline
from tests.conftest import FIXED_NOW, Knowledge


@pytest.fixture
def two_sessions(kb: Knowledge) -> tuple[KnowledgeEngine, list[str], list[str]]:
    """Session A (6 steps) then session B (4 steps) an hour later; A's last steps overlap
    nothing, so across sessions B's first step directly follows A's last."""
    kb.session("mm-a-session", hours_ago=3, goal="Send ETH", flow_tags=["send"])
    start = FIXED_NOW - timedelta(hours=3)
    a = [
        kb.step("mm-a-session", test_id=f"a-{n}", at=start + timedelta(minutes=n)) for n in range(6)
    ]
    kb.session("mm-b-session", hours_ago=2, goal="Swap", flow_tags=["swap"])
    later = FIXED_NOW - timedelta(hours=2)
    b = [
        kb.step("mm-b-session", test_id=f"b-{n}", at=later + timedelta(minutes=n)) for n in range(4)
    ]
    return kb.engine(), a, b


def ids(steps: list[StepSummary]) -> list[str]:
    return [s.stepId for s in steps]


def run(
    engine: KnowledgeEngine, anchor: str, before: int, after: int, scope: str
) -> TimelineResult:
    reader = engine.reader
    return timeline(reader.searcher(), reader.schema, anchor, before, after, scope)


def test_session_timeline_stays_in_the_session_in_order(
    two_sessions: tuple[KnowledgeEngine, list[str], list[str]],
) -> None:
    engine, a, _ = two_sessions
    result = run(engine, a[4], 2, 5, "session")
    assert result.anchor.stepId == a[4]
    assert ids(result.before) == a[2:4]
    assert ids(result.after) == a[5:]
    sessions = result.sessions
    assert set(sessions) == {"mm-a-session"}
    assert sessions["mm-a-session"].stepCount == 6
    assert sessions["mm-a-session"].goal == "Send ETH"
    assert sessions["mm-a-session"].flowTags == ["send"]


def test_all_scope_crosses_the_session_boundary_by_time(
    two_sessions: tuple[KnowledgeEngine, list[str], list[str]],
) -> None:
    engine, a, b = two_sessions
    result = run(engine, a[5], 2, 3, "all")
    assert ids(result.before) == a[3:5]
    assert ids(result.after) == b[:3]
    assert set(result.sessions) == {"mm-a-session", "mm-b-session"}
    first_after = result.after[0]
    assert first_after.sourceSession is not None
    assert first_after.sourceSession.id == "mm-b-session"
    assert first_after.sourceSession.stepCount == 4
    backwards = run(engine, b[0], 2, 0, "all")
    assert ids(backwards.before) == a[4:]
    assert backwards.after == []


def test_an_unknown_anchor_is_not_found_naming_the_field(
    two_sessions: tuple[KnowledgeEngine, list[str], list[str]],
) -> None:
    engine, _, _ = two_sessions
    with pytest.raises(NotFound, match="anchor: no step"):
        run(engine, "mm-a-session/9999-mm_click", 1, 1, "session")


def test_step_context_says_created_until_someone_recalls_it(
    two_sessions: tuple[KnowledgeEngine, list[str], list[str]],
) -> None:
    engine, a, _ = two_sessions
    reader = engine.reader
    context = step_context(reader.searcher(), reader.schema, a[1])
    assert context.session.id == "mm-a-session" and context.stepCount == 6
    assert context.usageType == "created" and context.recalledBy == []
    with pytest.raises(NotFound, match="stepId"):
        step_context(reader.searcher(), reader.schema, "mm-a-session/0042-mm_click")


def test_step_context_lists_the_sessions_that_recalled_it(kb: Knowledge) -> None:
    kb.session("mm-a-session", hours_ago=3)
    memory = kb.step("mm-a-session", test_id="send-button")
    kb.session("mm-b-session", hours_ago=1)
    follower = kb.step("mm-b-session", test_id="send-button")
    session_id, stem = follower.split("/")
    path = kb.root / session_id / "steps" / f"{stem}.json"
    record = orjson.loads(path.read_bytes())
    record["recalled"] = [{"stepId": memory, "via": "search"}]
    path.write_bytes(orjson.dumps(record))
    engine = kb.engine()
    context = step_context(engine.reader.searcher(), engine.reader.schema, memory)
    assert context.usageType == "recalled"
    assert [(r.sessionId, r.stepId) for r in context.recalledBy] == [("mm-b-session", follower)]


def test_every_search_result_carries_its_source_session(
    two_sessions: tuple[KnowledgeEngine, list[str], list[str]],
) -> None:
    engine, a, b = two_sessions
    page = engine.search(validate(SearchInput, {"query": "click", "limit": 20}))
    assert {r.stepId for r in page.results} == set(a + b)
    for result in page.results:
        source = result.sourceSession
        assert source is not None and source.id == result.sessionId
        assert source.stepCount == (6 if source.id == "mm-a-session" else 4)
        assert source.goal == ("Send ETH" if source.id == "mm-a-session" else "Swap")
        assert source.createdAt and source.flowTags in (["send"], ["swap"])


def test_all_scope_finds_the_nearest_steps_in_a_busy_minute(kb: Knowledge) -> None:
    """Two sessions interleaved one second apart: more steps near the anchor than the first
    time window needs, so the neighbours come from a narrow window, in time then id order."""
    start = FIXED_NOW - timedelta(hours=1)
    steps: list[tuple[datetime, str]] = []
    for session_id in ("mm-busy-a", "mm-busy-b"):
        kb.session(session_id, hours_ago=1)
    for n in range(160):
        at = start + timedelta(seconds=n // 2)  # two steps share each second
        session_id = ("mm-busy-a", "mm-busy-b")[n % 2]
        steps.append((at, kb.step(session_id, test_id=f"t-{n}", at=at)))
    ordered = [step_id for _, step_id in sorted(steps)]
    engine = kb.engine()
    anchor = ordered[80]
    result = run(engine, anchor, 7, 9, "all")
    assert ids(result.before) == ordered[73:80]
    assert ids(result.after) == ordered[81:90]
    edge = run(engine, ordered[2], 5, 0, "all")  # fewer than asked before it: all of them
    assert ids(edge.before) == ordered[:2]
