"""Diff-mode observations (today's compact observations), completed from the snapshot before.

An observation in diff mode lists only the accessibility nodes that are new or changed since
the observation before it, with `a11y.diff`: the refs `added` and `removed`, and how many nodes
stayed `unchanged`. The whole snapshot is the one before without the removed nodes and with the
listed ones in their place, so the added nodes count as seen on the step and the removed ones
as gone. Refs are numbered in document order (`e1`, `e2`, …), so sorting by number gives the
page's order back. The snapshot before must be the one the diff was made against: when the
nodes carried over are not as many as `unchanged` says (the first step read, a step between
them unreadable), only the listed nodes are known.
"""

import re
from collections.abc import Sequence

from engine.core import OBSERVATIONS_CACHED, ByIdentity
from engine.records.models import A11yNode, A11ySnapshot, Observation, StepRecord

_REF = re.compile(r"e(\d+)")


def diff_of(record: StepRecord) -> dict[str, object] | None:
    """The `a11y.diff` of a record's observation, when it is in diff mode."""
    diff = (record.observation.a11y.model_extra or {}).get("diff")
    return diff if isinstance(diff, dict) else None


def completed(record: StepRecord, before: Sequence[A11yNode] | None) -> StepRecord:
    """`record` with a diff-mode observation made whole from `before` (the previous full
    snapshot); the same record when its observation is not a diff."""
    diff = diff_of(record)
    if diff is None:
        return record
    known = _completions(record.observation)
    key = id(before) if before else 0
    if key not in known:
        known[key] = (before, _whole(record.observation, diff, before))
    return record.model_copy(update={"observation": known[key][1]})


_completions: ByIdentity[Observation, dict[int, tuple[object, Observation]]] = ByIdentity(
    lambda _: {}, OBSERVATIONS_CACHED
)
"""Diff-mode observation -> id of the snapshot before -> (that snapshot, the whole
observation). Parsed observations are shared by the records that hold the same one, and so
are the snapshots before them (`knowledge_root.parse_step`): agents see the same screens
again and again. The whole observation is made once per pair and shared in turn, so what is
derived from it by identity (`engine.index.documents.observed`, the secrets it shows) is
derived once too. Each entry holds its snapshot, so no other object can take its id."""


def _whole(
    observation: Observation, diff: dict[str, object], before: Sequence[A11yNode] | None
) -> Observation:
    listed = observation.a11y.nodes
    nodes = list(listed)
    removed = diff.get("removed")
    unchanged = diff.get("unchanged")
    if before and isinstance(removed, list) and isinstance(unchanged, int):
        gone = {ref for ref in removed if isinstance(ref, str)} | {n.ref for n in listed}
        carried = [n for n in before if n.ref not in gone]
        if len(carried) == unchanged:
            nodes = _in_page_order(carried + nodes)
    return observation.model_copy(update={"a11y": A11ySnapshot(nodes=nodes)})


def _in_page_order(nodes: list[A11yNode]) -> list[A11yNode]:
    """Nodes by ref number when every ref is numbered (`e12`); as given otherwise."""
    numbers = [_REF.fullmatch(n.ref) for n in nodes]
    if not all(numbers):
        return nodes
    keyed = [(int(m.group(1)), n) for m, n in zip(numbers, nodes, strict=True) if m]
    return [n for _, n in sorted(keyed, key=lambda pair: pair[0])]
