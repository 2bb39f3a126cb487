"""Salience from recall links: counted, decayed at query time, bounded below exact matches."""

from datetime import timedelta

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.query import SALIENCE_WEIGHT, lifted, salience, salience_of
from engine.records import DAY_MS
from tests.conftest import FIXED_NOW, Knowledge

NOW_MS = 1_800_000_000_000


def test_salience_grows_with_recalls_and_fades_with_their_age() -> None:
    assert salience_of([], NOW_MS) == 0.0
    one, two = salience_of([NOW_MS], NOW_MS), salience_of([NOW_MS, NOW_MS], NOW_MS)
    assert 0 < one < two < 1
    month_old = salience_of([NOW_MS - 30 * DAY_MS], NOW_MS)
    year_old = salience_of([NOW_MS - 365 * DAY_MS], NOW_MS)
    assert one / 2 - 1e-9 <= month_old < one and year_old < month_old / 100


@given(st.lists(st.integers(min_value=0, max_value=NOW_MS), max_size=300))
def test_salience_stays_below_one(times: list[int]) -> None:
    assert 0 <= salience_of(times, NOW_MS) < 1


scores = st.floats(min_value=0.01, max_value=1000, allow_nan=False)


@given(st.lists(st.tuples(scores, st.booleans(), st.floats(0, 1)), min_size=1, max_size=30))
def test_a_lift_never_overtakes_an_exact_match_nor_lowers_a_score(
    rows: list[tuple[float, bool, float]],
) -> None:
    base = [r[0] for r in rows]
    exact = [r[1] for r in rows]
    final = lifted(base, exact, [r[2] for r in rows])
    for i, (score, is_exact, value) in enumerate(rows):
        assert score <= final[i] <= score * (1 + SALIENCE_WEIGHT * value) + 1e-9
        if is_exact:
            continue
        for j, other in enumerate(base):
            if exact[j] and other > score:  # was below this exact match: stays below
                assert final[i] < final[j]
            elif exact[j] and other == score:  # tied with it: never passes it
                assert final[i] <= final[j]


@given(st.lists(st.tuples(scores, st.booleans()), min_size=1, max_size=30))
def test_without_recalls_the_scores_are_the_reranked_ones(rows: list[tuple[float, bool]]) -> None:
    """Nothing recalled (the common case, answered without lifting): what lifting by factors
    of 1 gives."""
    base = [r[0] for r in rows]
    assert lifted(base, [r[1] for r in rows], [0.0] * len(rows)) == base


def recalled(kb: Knowledge, memory: str, session_id: str, days_ago: float) -> str:
    """A step of `session_id` that followed `memory` and worked (as the server records it)."""
    kb.session(session_id, hours_ago=days_ago * 24)
    follower = kb.step(session_id, test_id="other-button", at=FIXED_NOW - timedelta(days=days_ago))
    session, stem = follower.split("/")
    path = kb.root / session / "steps" / f"{stem}.json"
    record = orjson.loads(path.read_bytes())
    record["recalled"] = [{"stepId": memory, "via": "search"}]
    path.write_bytes(orjson.dumps(record))
    return follower


def test_a_recalled_step_outranks_its_unrecalled_twin_and_min_salience_filters(
    kb: Knowledge,
) -> None:
    kb.session("mm-twin-a", hours_ago=100, goal="Send")
    a = kb.step("mm-twin-a", test_id="send-button")
    kb.session("mm-twin-b", hours_ago=100, goal="Send")
    b = kb.step("mm-twin-b", test_id="send-button")
    before = [r.stepId for r in kb.search("send button").results]
    assert before[:2] == [a, b]  # equal scores and session times: by step id
    recalled(kb, b, "mm-follower-1", days_ago=1)
    recalled(kb, b, "mm-follower-2", days_ago=40)
    page = kb.search("send button")
    top = page.results[0]
    assert top.stepId == b and top.recallCount == 2 and 0 < (top.salience or 0) < 1
    twin = next(r for r in page.results if r.stepId == a)
    assert twin.recallCount == 0 and twin.salience == 0
    salient = kb.search("send button", minSalience=top.salience)
    assert [r.stepId for r in salient.results] == [b] and salient.total == 1
    assert kb.search("send button", minSalience=1).total == 0


def test_salience_never_lifts_a_partial_match_above_an_exact_one(
    kb: Knowledge, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Even with a weight that would lift it tenfold, the partial match stays below."""
    monkeypatch.setattr(salience, "SALIENCE_WEIGHT", 10.0)
    kb.session("mm-exact", hours_ago=100)
    exact = kb.step("mm-exact", test_id="confirm-send-button")
    kb.session("mm-partial", hours_ago=100)
    partial = kb.step("mm-partial", test_id="send-button")
    for n in range(8):
        recalled(kb, partial, f"mm-follower-{n}", days_ago=0.5)
    results = kb.search("confirm send").results
    ids = [r.stepId for r in results]
    assert ids.index(exact) < ids.index(partial)
    assert results[ids.index(partial)].recallCount == 8
