"""A password typed by a11y ref inside a `run_steps` batch is scrubbed before it is written,
as the same action alone is: the recorder resolves every action's ref against the session's
earlier snapshots, and the scrubber judges every action on what its ref named."""

from pathlib import Path
from typing import Any

import pytest

from engine import StepRecord
from server.recording import write_step
from tests.conftest import Knowledge

PASSWORD = "Kestrel-Batch-Secret-7"
SNAPSHOT_NODES = [
    {"ref": "e1", "role": "heading", "name": "Welcome back"},
    {"ref": "e2", "role": "textbox", "name": "Password"},
    {"ref": "e3", "role": "button", "name": "Unlock"},
]


def batch(*actions: dict[str, Any], nodes: list[dict[str, str]] | None = None) -> StepRecord:
    return StepRecord.model_validate(
        {
            "timestamp": "2026-01-15T12:00:00.000Z",
            "sessionId": "mm-batch",
            "tool": {"name": "mm_run_steps", "input": {"steps": list(actions)}},
            "outcome": {"ok": True},
            "observation": {"a11y": {"nodes": nodes or []}},
        }
    )


def written_bytes(root: Path) -> bytes:
    return b"".join(p.read_bytes() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize(
    "typed",
    [
        {"tool": "type", "args": {"ref": "e2", "text": PASSWORD}},
        {"tool": "mm_type", "args": {"a11yRef": "e2", "text": PASSWORD}},
        {"tool": "fill", "args": {"ref": "e2", "value": PASSWORD}},
    ],
    ids=["type ref", "mm_type a11yRef", "fill ref (a tool not known to target)"],
)
def test_a_password_typed_by_ref_in_a_batch_is_never_written(
    kb: Knowledge, typed: dict[str, Any]
) -> None:
    session = kb.session("mm-batch", goal="unlock")
    snapshot = kb.record(session, "mm_describe_screen")
    nodes = [(n["ref"], n["role"], n["name"]) for n in SNAPSHOT_NODES]
    kb.store.record_step(kb.record(session, "mm_describe_screen", a11y=nodes))
    kb.store.record_step(snapshot)  # a later step without a snapshot: look further back
    amount = {"tool": "type", "args": {"testId": "amount", "text": "0.25"}}
    _, record = write_step(kb.store, batch(typed, {"tool": "click", "args": {"ref": "e3"}}, amount))
    assert record.tool.textRedacted is True
    raw = written_bytes(kb.root)
    assert PASSWORD.encode() not in raw
    assert b"0.25" in raw, "the amount typed in another action is knowledge, not a secret"


def test_a_ref_only_the_batchs_own_snapshot_knows_is_judged_on_it(kb: Knowledge) -> None:
    """No earlier snapshot: the batch's own (after its last action) still names the field."""
    kb.session("mm-batch", goal="unlock")
    typed = {"tool": "type", "args": {"ref": "e2", "text": PASSWORD}}
    write_step(kb.store, batch(typed, nodes=SNAPSHOT_NODES))
    assert PASSWORD.encode() not in written_bytes(kb.root)


def test_the_snapshot_before_the_batch_decides_what_a_ref_was(kb: Knowledge) -> None:
    """Refs are renumbered by every snapshot: after the batch `e2` is a harmless link, but the
    agent typed into `e2` as the snapshot before it showed it, a password box."""
    session = kb.session("mm-batch", goal="unlock")
    nodes = [(n["ref"], n["role"], n["name"]) for n in SNAPSHOT_NODES]
    kb.store.record_step(kb.record(session, "mm_describe_screen", a11y=nodes))
    after = [{"ref": "e2", "role": "link", "name": "Activity"}]
    typed = {"tool": "type", "args": {"ref": "e2", "text": PASSWORD}}
    write_step(kb.store, batch(typed, {"tool": "click", "args": {"ref": "e3"}}, nodes=after))
    assert PASSWORD.encode() not in written_bytes(kb.root)
