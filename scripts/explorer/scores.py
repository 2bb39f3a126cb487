"""The reuse numbers of a run of agents A, B (and C), as `scripts/bench_reuse.py` reports them.

- `callsA`, `callsB`: every tool call of every task (launch and the success check included,
  the closing cleanup not); a task that ran out of budget counts its whole budget.
- `saved`: 1 − callsB / callsA over the tasks that A and B both completed ("with the same
  completion"); None when there is none.
- `top3Precision`: of the top-3 suggestions of every `mm_describe_screen` B made, the share
  whose preferred target was on that screen and enabled.
- `renamedCorrect`: of the suggestions C followed for a remembered testId that the renamed app
  no longer has, the share whose action worked on the element with the remembered role and
  name; None without a renamed app or when C followed none.
"""

import statistics
from typing import Any

from explorer.agent import Report


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def scores(a: list[Report], b: list[Report], c: list[Report] | None = None) -> dict[str, Any]:
    """The reuse benchmark's final JSON line, keys in the order it is read in."""
    both = [(x, y) for x, y in zip(a, b, strict=True) if x.completed and y.completed]
    calls_a = sum(x.calls for x, _ in both)
    calls_b = sum(y.calls for _, y in both)
    renamed = sum(r.renamed for r in c or [])
    return {
        "tasks": len(a),
        "completedA": sum(r.completed for r in a),
        "completedB": sum(r.completed for r in b),
        "callsA": sum(r.calls for r in a),
        "callsB": sum(r.calls for r in b),
        "saved": round(1 - calls_b / calls_a, 3) if calls_a else None,
        "top3Precision": _share(sum(r.precise for r in b), sum(r.shown for r in b)),
        "renamedCorrect": _share(sum(r.renamed_correct for r in c or []), renamed),
    }


def extras(a: list[Report], b: list[Report], c: list[Report] | None = None) -> dict[str, Any]:
    """What the table and docs add: C's completion and the describe times with and without
    knowledge to use (the priorKnowledge cost)."""
    describe_a = [s for r in a for s in r.describe_seconds]
    describe_b = [s for r in b for s in r.describe_seconds]
    p50_a = statistics.median(describe_a) * 1000 if describe_a else None
    p50_b = statistics.median(describe_b) * 1000 if describe_b else None
    return {
        "completedC": sum(r.completed for r in c) if c is not None else None,
        "callsC": sum(r.calls for r in c) if c is not None else None,
        "describeP50MsA": round(p50_a, 1) if p50_a is not None else None,
        "describeP50MsB": round(p50_b, 1) if p50_b is not None else None,
        "describesA": len(describe_a),
        "describesB": len(describe_b),
        "exploredB": sum(r.explored for r in b),
    }
