"""Every answer is bounded: a long session gives a capped answer that says it was cut and how
to get the rest (`truncated`, `nextOffset`), never one that grows with the session.

Time and memory at 50,000 steps are measured by `scripts/adversary.py` (tests assert no clock).
"""

from datetime import datetime, timedelta

import orjson
import pytest

from engine.core import SummarizeInput, validate
from engine.history import summarize
from tests.conftest import FIXED_NOW, Knowledge, bytes_read

LONG = "mm-long-recipe"
STEPS = 1_500
MIXED = "mm-mixed-recipe"
MIXED_STEPS = 600


@pytest.fixture(scope="module")
def long_session(module_kb: Knowledge) -> Knowledge:
    """One session of 1,500 steps on 300 screens in turn (every fifth step fails), written
    directly: recording them one by one would make a slow test of a size rule."""
    kb = module_kb
    kb.session(LONG, hours_ago=3, goal="Soak the send flow", flow_tags=["soak"])
    steps = kb.root / LONG / "steps"
    steps.mkdir(parents=True)
    start = FIXED_NOW - timedelta(hours=2)
    for number in range(1, STEPS + 1):
        record = kb.record(
            LONG,
            test_id=f"soak-button-{number % 7}",
            screen=f"soak-screen-{number % 300}",
            ok=number % 5 != 0,
            error=None if number % 5 else ("MM_TARGET_NOT_FOUND", "Element not found"),
            at=start + timedelta(seconds=number),
        )
        name = f"{number:04d}-mm_click.json"
        (steps / name).write_bytes(record.model_dump_json(exclude_none=True).encode())
    kb.index()
    return kb


@pytest.fixture(scope="module")
def mixed_session(module_kb: Knowledge) -> Knowledge:
    """One session of 600 steps whose names alternate between the two forms (numbered and
    stamped), so that only the records' times order it."""
    kb = module_kb
    kb.session(MIXED, hours_ago=3, goal="Mixed names")
    steps = kb.root / MIXED / "steps"
    steps.mkdir(parents=True)
    start = FIXED_NOW - timedelta(hours=2)
    for number in range(1, MIXED_STEPS + 1):
        at = start + timedelta(seconds=number)
        record = kb.record(MIXED, test_id=f"mixed-button-{number}", at=at)
        (steps / mixed_name(number, at)).write_bytes(
            record.model_dump_json(exclude_none=True).encode()
        )
    return kb


def mixed_name(number: int, at: datetime) -> str:
    if number % 2:
        return f"{number // 2 + 1:04d}-mm_click.json"
    return f"{at.astimezone():%Y%m%d-%H%M%S}-000-mm_click.json"


def size(result: object) -> int:
    return len(orjson.dumps(result.to_json_dict()))  # type: ignore[attr-defined]


def test_summarize_pages_through_a_long_session(long_session: Knowledge) -> None:
    engine = long_session.engine()
    first = engine.summarize(validate(SummarizeInput, {"scope": {"sessionId": LONG}}))
    assert first.session.stepCount == STEPS
    assert first.session.failedStepCount == STEPS // 5
    assert first.truncated is True and first.nextOffset is not None
    assert len(first.actions) < STEPS * 4 // 5

    actions, failures, offset, pages = [], [], 0, 0
    while offset is not None:
        page = engine.summarize(
            validate(SummarizeInput, {"scope": {"sessionId": LONG}, "offset": offset})
        )
        assert size(page) < 512_000
        actions += [a.stepId for a in page.actions]
        failures += [f.stepId for f in page.failures]
        offset, pages = page.nextOffset, pages + 1
    assert pages > 1
    assert len(actions) == STEPS * 4 // 5 and len(set(actions)) == len(actions)
    assert len(failures) == STEPS // 5
    numbers = [int(step_id.split("/")[1].split("-")[0]) for step_id in actions]
    assert numbers == sorted(numbers)


@pytest.mark.parametrize("past", [STEPS, STEPS + 1_000])
def test_a_page_past_the_last_step_is_empty_not_the_whole_session(
    long_session: Knowledge, past: int
) -> None:
    engine = long_session.engine()
    request = {"scope": {"sessionId": LONG}, "offset": past}
    page = engine.summarize(validate(SummarizeInput, request))
    assert page.screens == [] and page.actions == [] and page.failures == []
    assert page.truncated is True and page.nextOffset is None
    assert page.session.stepCount == STEPS


def test_a_session_row_of_a_search_is_capped(long_session: Knowledge) -> None:
    page = long_session.search("soak button", types=["session"])
    [row] = page.sessions()
    assert row.truncated is True
    assert len(row.screens) <= 100
    assert size(page) < 64_000


def test_a_session_of_mixed_names_is_read_whole_once_not_for_every_page(
    mixed_session: Knowledge,
) -> None:
    """Its order needs every record's time: the first page reads the whole session, the next
    ones their own steps (and the 30 before them) while no file changes."""

    def page(offset: int) -> list[str]:
        """The page's actions, read from the files alone (no index: its failed steps aside,
        a summary is read from the files)."""
        request = validate(SummarizeInput, {"scope": {"sessionId": MIXED}, "offset": offset})
        summary = summarize(mixed_session.root, request, None, lambda _: 0)
        return [a.target or "" for a in summary.actions]

    assert page(0)[:3] == [f"testId:mixed-button-{n}" for n in (1, 2, 3)]
    steps = mixed_session.root / MIXED / "steps"
    whole = sum(path.stat().st_size for path in steps.iterdir())
    before = bytes_read()
    assert page(400) == [f"testId:mixed-button-{n}" for n in range(401, MIXED_STEPS + 1)]
    assert bytes_read() - before < whole / 2

    at = FIXED_NOW - timedelta(hours=1)
    record = mixed_session.record(MIXED, test_id="mixed-button-last", at=at)
    (steps / mixed_name(MIXED_STEPS + 1, at)).write_bytes(
        record.model_dump_json(exclude_none=True).encode()
    )
    assert page(MIXED_STEPS) == ["testId:mixed-button-last"]  # a new file: ordered again
