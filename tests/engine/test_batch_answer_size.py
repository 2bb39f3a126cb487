"""Answers are bounded by size, not only by count: a page of batch steps (`run_steps`, up to 100
actions each, each action's typed text up to 1,000 characters) was megabytes, in `summarize`
(200 steps a page) and in `search` (100 results a page). Each page now says where the next
starts, and paging through them lists everything exactly once.
"""

import json

import orjson
import pytest

from engine.core import SearchInput, SummarizeInput, validate
from tests.conftest import Knowledge

SESSION = "mm-batches-big"
BATCHES = 120
ACTIONS = 100
TEXT = "word " * 180
PAGE_LIMIT_BYTES = 512_000


def batch(number: int) -> dict[str, object]:
    steps = [
        {"tool": "type", "args": {"testId": f"field-{number}-{k}", "text": f"{k} {TEXT}"}}
        for k in range(ACTIONS - 1)
    ]
    steps.append({"tool": "click", "args": {"testId": f"pinned-target-{number}"}})
    return {
        "timestamp": f"2026-01-15T11:{number // 60:02d}:{number % 60:02d}.000Z",
        "sessionId": SESSION,
        "tool": {"name": "run_steps", "input": {"steps": steps, "stopOnError": False}},
        "outcome": {"ok": True},
        "observation": {"state": {"currentScreen": "home"}},
    }


@pytest.fixture(scope="module")
def big_batches(module_kb: Knowledge) -> Knowledge:
    kb = module_kb
    kb.session(SESSION, hours_ago=3, goal="Fill a long form")
    steps = kb.root / SESSION / "steps"
    steps.mkdir(parents=True)
    for number in range(1, BATCHES + 1):
        (steps / f"{number:04d}-run_steps.json").write_text(json.dumps(batch(number)))
    kb.index()
    return kb


def size(result: object) -> int:
    return len(orjson.dumps(result.to_json_dict()))  # type: ignore[attr-defined]


def test_summarize_pages_batches_by_size_and_lists_every_action_once(
    big_batches: Knowledge,
) -> None:
    engine = big_batches.engine()
    listed: list[tuple[str, int | None]] = []
    offset: int | None = 0
    pages = 0
    while offset is not None:
        request = {"scope": {"sessionId": SESSION}, "offset": offset}
        page = engine.summarize(validate(SummarizeInput, request))
        assert size(page) < PAGE_LIMIT_BYTES
        assert page.offset == offset and page.truncated is True
        listed += [(a.stepId, a.batchIndex) for a in page.actions]
        assert page.nextOffset is None or page.nextOffset > offset
        offset, pages = page.nextOffset, pages + 1
    assert pages > 1
    assert len(listed) == len(set(listed)) == BATCHES * ACTIONS
    assert listed == sorted(listed, key=lambda a: (a[0], a[1]))


def test_search_pages_of_batches_are_bounded_and_name_what_they_left_out(
    big_batches: Knowledge,
) -> None:
    engine = big_batches.engine()
    seen: list[str] = []
    offset: int | None = 0
    while offset is not None:
        request = {"query": "pinned target", "limit": 100, "offset": offset, "scope": "all"}
        page = engine.search(validate(SearchInput, request))
        assert size(page) < PAGE_LIMIT_BYTES
        for row in page.steps():
            assert row.batch is not None and len(row.batch) <= 10
            assert row.batchCount == ACTIONS
            assert any(a.index == ACTIONS - 1 for a in row.batch), "the matched action is listed"
        seen += [r.stepId for r in page.steps()]
        assert page.hasMore == (page.nextOffset is not None)
        offset = page.nextOffset
    assert len(seen) == len(set(seen)) == BATCHES
