"""The same session written in either format gives the same answers, modulo ids.

A generated session (screens, clicks, typing, failures, observations) is written once as the
records our specs describe and once as today's (bare tool names, timestamp file names,
`context`, `launch`, diff-mode observations); every question asked of both roots must get the
same answer once step ids are replaced by the step's position and `mm_` is taken off tool names.
"""

import re
import tempfile
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import LastInput, ScreenContext, SummarizeInput, TimelineInput, validate
from engine.index import remove_folder
from tests.compat.mm_format import Act, Session, Step, write_new, write_old
from tests.compat.scenarios import CONFIRM, HOME, SEND, SWAP
from tests.conftest import FIXED_NOW, Knowledge

SCREENS = [HOME, SEND, CONFIRM, SWAP]
QUERIES = [
    "send amount",
    "confirm the transaction",
    "swap button",
    "coin-overview-send",
    "element not found",
    "recipient address",
]
PREFIX = re.compile(r"\bmm_")


@st.composite
def steps(draw: st.DrawFn) -> list[Step]:
    """A walk over the wallet's screens: each step acts on what the previous one showed."""
    count = draw(st.integers(min_value=2, max_value=12))
    here = HOME
    walk = [Step(Act("describe_screen"), HOME)]
    for _ in range(count):
        kind = draw(st.sampled_from(["click", "type", "describe_screen", "wait_for", "navigate"]))
        then = draw(st.sampled_from(SCREENS))
        if kind == "describe_screen":
            walk.append(Step(Act(kind), here))
            continue
        if kind == "navigate":
            walk.append(Step(Act(kind, args={"screen": then.name}), then))
            here = then
            continue
        test_id = draw(st.sampled_from([t for t, _ in here.test_ids]))
        text = draw(st.sampled_from(["0.1", "0xabc", "hello"])) if kind == "type" else None
        if draw(st.booleans()) and draw(st.booleans()):  # one in four fails
            error = ("MM_TARGET_NOT_FOUND", f"Element not found: {test_id}")
            walk.append(Step(Act(kind, test_id=test_id, text=text), here, ok=False, error=error))
            continue
        walk.append(Step(Act(kind, test_id=test_id, text=text), then))
        here = then
    return walk


def normal(value: Any, ids: dict[str, str]) -> Any:
    """`value` with step ids replaced by positions and `mm_` taken off tool names."""
    if isinstance(value, dict):
        return {k: normal(v, ids) for k, v in value.items()}
    if isinstance(value, list):
        return [normal(v, ids) for v in value]
    if isinstance(value, str):
        return ids.get(value) or PREFIX.sub("", value)
    return value


def answers(kb: Knowledge, ids: list[str], other: str) -> dict[str, Any]:
    """Everything asked of one root, ids replaced by positions."""
    engine = kb.engine()
    positions = {step_id: f"#{i}" for i, step_id in enumerate(ids)}
    drop = {"score", "generatedAt", "createdAt", "timestamp", "supersededAt", "similarity"}
    drop |= {"context", "stateMode", "fixturePreset"}  # what only the new format records

    def plain(result: Any) -> Any:
        data = result.model_dump(mode="json", exclude_none=True)
        return normal(_without(data, drop), positions)

    found: dict[str, Any] = {}
    for query in QUERIES:
        for mode in ("keyword", "hybrid"):
            found[f"{mode}:{query}"] = plain(kb.search(query, mode=mode, limit=50))
    found["last"] = plain(engine.last(validate(LastInput, {"n": 50, "scope": "all"})))
    session = ids[0].split("/")[0]
    found["summary"] = plain(engine.summarize(SummarizeInput(scope={"sessionId": session})))
    middle = ids[len(ids) // 2]
    found["timeline"] = plain(engine.timeline(TimelineInput(anchor=middle, before=3, after=3)))
    for screen in SCREENS:
        context = ScreenContext(
            screen=screen.name or "unknown",
            url=screen.url,
            test_ids=[t for t, _ in screen.test_ids],
            a11y=[(n.role, n.name) for n in screen.nodes],
            session_id=other,
        )
        found[f"prior:{screen.name}"] = plain(engine.prior_knowledge(context))
    return found


def _without(value: Any, keys: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _without(v, keys) for k, v in value.items() if k not in keys}
    if isinstance(value, list):
        return [_without(v, keys) for v in value]
    return value


def root_answers(walk: list[Step], fmt: str, diff: bool) -> dict[str, Any]:
    """The answers of a root of its own, removed after (`remove_folder`: a Tantivy thread of an
    index just used may still re-create a file in it, which `TemporaryDirectory` fails on)."""
    folder = Path(tempfile.mkdtemp())
    try:
        kb = Knowledge(folder)
        session = Session(
            "mm-same-a", FIXED_NOW - timedelta(hours=5), list(walk), goal="Send", flow_tags=["send"]
        )
        ids = (
            write_old(kb.root, session) if fmt == "old" else write_new(kb.root, session, diff=diff)
        )
        return answers(kb, ids, "mm-other-session")
    finally:
        remove_folder(folder)


@pytest.mark.slow
@settings(max_examples=12)
@given(walk=steps(), diff=st.booleans())
def test_either_format_gives_the_same_answers(walk: list[Step], diff: bool) -> None:
    old = root_answers(walk, "old", diff)
    new = root_answers(walk, "new", diff)
    for question, answer in old.items():
        assert new[question] == answer, question
