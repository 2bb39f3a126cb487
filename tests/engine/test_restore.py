"""Restoring a step superseded by hand: the decision leaves `superseded.json`, the step is
searchable again, and nothing else of the file changes; a detected decision is refused."""

import pytest

from engine import StepInput, restore_step
from engine.core import InvalidInput, NotFound
from engine.index import supersede
from tests.conftest import Knowledge
from tests.engine.test_supersede import after_rename, before_rename, decisions


def test_restore_withdraws_a_decision_made_by_hand_and_only_it(kb: Knowledge) -> None:
    kb.session("mm-hand", hours_ago=3)
    first = kb.step("mm-hand", test_id="a-button")
    second = kb.step("mm-hand", test_id="b-button")
    supersede(kb.store, first, None, "the a-button moved")
    supersede(kb.store, second, None, "the b-button moved")
    assert [r.stepId for r in kb.search("a-button").steps()] == []
    restored = restore_step(kb.store, StepInput(stepId=first))
    assert restored.isSuperseded is False and restored.withdrawn
    assert set(decisions(kb, "mm-hand")) == {second.split("/")[1]}
    assert first in [r.stepId for r in kb.search("a-button").steps()]
    restore_step(kb.store, StepInput(stepId=second))
    assert not (kb.root / "mm-hand" / "superseded.json").exists()


def test_restore_refuses_what_it_cannot_withdraw_and_writes_nothing(kb: Knowledge) -> None:
    old = before_rename(kb)
    after_rename(kb)
    kb.index()  # detection supersedes the old step
    written = (kb.root / "mm-old" / "superseded.json").read_bytes()
    with pytest.raises(InvalidInput, match="detection"):
        restore_step(kb.store, StepInput(stepId=old))
    kb.session("mm-hand", hours_ago=3)
    plain = kb.step("mm-hand", test_id="a-button")
    with pytest.raises(InvalidInput, match="not superseded"):
        restore_step(kb.store, StepInput(stepId=plain))
    with pytest.raises(NotFound):
        restore_step(kb.store, StepInput(stepId="mm-hand/9999-mm_click"))
    assert (kb.root / "mm-old" / "superseded.json").read_bytes() == written
    assert not (kb.root / "mm-hand" / "superseded.json").exists()
