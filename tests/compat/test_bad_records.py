"""Bad records in today's format: indexed as far as they can be read, each problem reported
with its reason in the sync report's `warnings` (and the session summary's), never fatal,
nothing else lost."""

import json
from pathlib import Path
from typing import Any

import pytest

from engine import LastInput, SummarizeInput
from tests.compat.mm_format import write_new
from tests.compat.scenarios import send_flow
from tests.conftest import Knowledge

SESSION = "mm-bad-a"


def batch_record(steps: Any) -> dict[str, Any]:
    return {
        "schemaVersion": 1,
        "timestamp": "2026-01-15T11:00:00.000Z",
        "sessionId": SESSION,
        "context": "e2e",
        "tool": {"name": "run_steps", "input": {"steps": steps, "stopOnError": False}},
        "outcome": {"ok": True},
        "observation": {
            "state": {"currentScreen": "home"},
            "testIds": [{"testId": "coin-overview-send", "tag": "button", "visible": True}],
            "a11y": {"nodes": []},
        },
        "labels": [],
    }


def put(kb: Knowledge, name: str, data: dict[str, Any]) -> Path:
    path = kb.root / SESSION / "steps" / name
    path.write_text(json.dumps(data))
    return path


@pytest.fixture
def session(kb: Knowledge) -> list[str]:
    return write_new(kb.root, send_flow(SESSION, hours_ago=2))


def warned(kb: Knowledge, path: Path) -> list[str]:
    report = kb.index()
    assert report.skipped == []
    return [w.reason for w in report.warnings if Path(w.path) == path]


def all_indexed(kb: Knowledge, count: int) -> None:
    listed = kb.engine().last(LastInput(n=200, scope={"sessionId": SESSION}))
    assert listed.total == count


@pytest.mark.parametrize(
    ("steps", "said"),
    [
        ({"tool": "click", "args": {"testId": "coin-overview-send"}}, "dict, not a list"),
        ("click coin-overview-send", "str, not a list"),
        (None, "missing"),
    ],
)
def test_steps_that_is_not_a_list(
    kb: Knowledge, session: list[str], steps: object, said: str
) -> None:
    path = put(kb, "20260115-110000-000-run_steps.json", batch_record(steps))
    [reason] = warned(kb, path)
    assert f"tool.input.steps is {said}" in reason
    all_indexed(kb, len(session) + 1)
    # the batch's own observation is still knowledge: what the screen showed after it
    shown = kb.search("coin-overview-send").steps()
    assert f"{SESSION}/20260115-110000-000-run_steps" in {s.stepId for s in shown}


def test_an_inner_step_without_a_tool(kb: Knowledge, session: list[str]) -> None:
    path = put(
        kb,
        "20260115-110000-000-run_steps.json",
        batch_record(
            [
                {"args": {"testId": "ghost-button"}},
                {"tool": "click", "args": {"testId": "coin-overview-swap"}},
                "click",
            ]
        ),
    )
    reasons = warned(kb, path)
    assert any("batch[0]" in r and "tool" in r for r in reasons)
    assert any("batch[2]" in r for r in reasons)
    all_indexed(kb, len(session) + 1)
    top = kb.search("coin-overview-swap").steps()[0]
    assert top.stepId == f"{SESSION}/20260115-110000-000-run_steps"
    assert "batch[1].testId:coin-overview-swap" in (top.matchedFields or [])


def test_a_batch_of_ten_thousand_inner_steps(kb: Knowledge, session: list[str]) -> None:
    steps = [{"tool": "click", "args": {"testId": f"row-{i}"}} for i in range(10_000)]
    path = put(kb, "20260115-110000-000-run_steps.json", batch_record(steps))
    [reason] = warned(kb, path)
    assert "inner steps" in reason
    all_indexed(kb, len(session) + 1)
    assert kb.search("row-0").steps()[0].stepId == f"{SESSION}/20260115-110000-000-run_steps"
    row = kb.search("row-0").steps()[0]
    assert row.batch is not None and len(row.batch) <= 100
    last_read = kb.search("row-99").steps()[0]
    assert "batch[99].testId:row-99" in (last_read.matchedFields or [])


@pytest.mark.parametrize("name", ["click.json", "my-step.json", "2026-01-15-click.json"])
def test_a_file_name_of_neither_form(kb: Knowledge, session: list[str], name: str) -> None:
    record = batch_record([{"tool": "click", "args": {"testId": "coin-overview-swap"}}])
    path = put(kb, name, record)
    [reason] = warned(kb, path)
    assert "neither" in reason
    all_indexed(kb, len(session) + 1)
    recipe = kb.engine().summarize(SummarizeInput(scope={"sessionId": SESSION}))
    assert [w["path"] for w in recipe.warnings] == [str(path)]
    stem = name.removesuffix(".json")
    # ordered by its timestamp (11:00, after the session's steps)
    listed = kb.engine().last(LastInput(n=1, scope={"sessionId": SESSION}))
    assert listed.steps[0].stepId == f"{SESSION}/{stem}"
