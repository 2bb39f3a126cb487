"""`convert_root` (the record formats benchmark's corpus, scripts/bench_formats.py): a root of
old records rewritten in today's format, successive actions that worked folded into batches,
keeps every action, and says which old steps each new one holds."""

from pathlib import Path

from tests.compat.mm_format import convert_root, write_old
from tests.compat.scenarios import send_flow
from tests.conftest import Knowledge


def test_successive_actions_become_one_batch_holding_them_all(
    kb: Knowledge, tmp_path: Path
) -> None:
    old = tmp_path / "old"
    old_ids = write_old(old, send_flow("mm-conv-a"))
    conversion = convert_root(old, kb.root, batches=True)
    assert conversion.counts == {
        "sessions": 1,
        "steps": 3,
        "actions": len(old_ids),
        "batches": 1,
        "copied": 0,
    }
    held = list(conversion.sources.values())
    assert [step for steps in held for step in steps] == old_ids
    batch = next(new for new, steps in conversion.sources.items() if len(steps) > 1)
    assert batch.endswith("-run_steps")
    top = kb.search("send-amount-input").steps()[0]
    assert top.stepId == batch
    assert "batch[2].testId:send-amount-input" in (top.matchedFields or [])
    assert [a.tool for a in top.batch or []] == ["click", "type", "type", "click", "click"]


def test_without_batches_every_step_stays_one_file(tmp_path: Path) -> None:
    old, new = tmp_path / "old", tmp_path / "new"
    old_ids = write_old(old, send_flow("mm-conv-b"))
    conversion = convert_root(old, new)
    assert [steps for steps in conversion.sources.values()] == [[i] for i in old_ids]
    assert conversion.counts["batches"] == 0
    assert len(list((new / "mm-conv-b" / "steps").iterdir())) == len(old_ids)
