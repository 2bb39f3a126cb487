"""Times sent by clients are evidence, not truth: a session dated in the future, or one session
alone, cannot make its own target the successor of what several other sessions show works.

The forged session looks at the unlock screen twice, where `unlock-forgot-password` stands in
place of `unlock-submit`, and clicks it: by the rename rules (a newer id sharing the part
`unlock`, seen twice after the old one was last used) that would supersede every honest
`unlock-submit` step, write decisions into the honest sessions, and — dated 2099 — stay the
newest evidence of all, so every later honest use would be hidden too.
"""

from datetime import UTC, datetime, timedelta

import pytest

from engine.index import remove_folder
from engine.records import DECISIONS_FILE, from_the_future
from tests.conftest import FIXED_NOW, Knowledge
from tests.engine.test_supersede import flagged

UNLOCK = [("unlock-password", ""), ("unlock-submit", "Unlock")]
FORGED = [("unlock-password", ""), ("unlock-forgot-password", "Forgot password?")]
FUTURE = datetime(2099, 1, 1, tzinfo=UTC)


def honest(kb: Knowledge, session_id: str, hours_ago: float) -> str:
    """Types the password and clicks Unlock by its testId; it worked."""
    kb.session(session_id, hours_ago=hours_ago, goal="unlock the wallet")
    kb.step(session_id, "mm_describe_screen", screen="unlock", test_ids=UNLOCK)
    kb.step(session_id, "mm_type", test_id="unlock-password", screen="unlock", redacted=True)
    return kb.step(session_id, test_id="unlock-submit", screen="home", test_ids=UNLOCK[:0])


def forged(kb: Knowledge, session_id: str, at: datetime | None) -> None:
    """Two looks at an unlock screen without `unlock-submit`, a click on the other id."""
    kb.session(session_id, hours_ago=0.5, goal="unlock the wallet")
    for n in range(2):
        when = at + timedelta(seconds=n) if at else None
        kb.step(session_id, "mm_describe_screen", screen="unlock", test_ids=FORGED, at=when)
    when = at + timedelta(seconds=5) if at else None
    kb.step(session_id, test_id="unlock-forgot-password", screen="unlock", at=when)


def decision_files(kb: Knowledge) -> list[str]:
    return sorted(p.parent.name for p in kb.root.glob(f"*/{DECISIONS_FILE}"))


@pytest.mark.parametrize("at", [FUTURE, None], ids=["dated 2099", "dated now"])
def test_one_forged_session_supersedes_nothing_other_sessions_show_works(
    kb: Knowledge, at: datetime | None
) -> None:
    honest_steps = {honest(kb, f"mm-honest-{n}", hours_ago=50 - 10 * n) for n in range(3)}
    forged(kb, "mm-attacker", at)
    kb.index()
    assert decision_files(kb) == [], "decisions written into sessions the attacker never touched"
    assert flagged(kb) == set()
    page = kb.search("unlock-submit")
    assert honest_steps <= {s.stepId for s in page.steps()}
    remove_folder(kb.index_dir)  # a reindex from the files reproduces nothing either
    kb.index()
    assert flagged(kb) == set() and decision_files(kb) == []


def test_a_later_honest_use_outweighs_a_future_dated_session(kb: Knowledge) -> None:
    """Even where one session could supersede (the old id worked in one session only), a
    future date does not keep it the newest evidence: the honest use after it counts."""
    honest(kb, "mm-honest-0", hours_ago=50)
    forged(kb, "mm-attacker", FUTURE)
    forged(kb, "mm-attacker-2", FUTURE + timedelta(minutes=1))
    later = honest(kb, "mm-honest-1", hours_ago=0.1)
    kb.index()
    assert flagged(kb) == set()
    assert later in {s.stepId for s in kb.search("unlock-submit").steps()}


def test_two_sessions_of_evidence_still_supersede_what_several_used(kb: Knowledge) -> None:
    """The rule's other side: a rename that two sessions saw supersedes the old steps of any
    number of sessions (the renamed UI is real, not one session's word)."""
    olds = {honest(kb, f"mm-honest-{n}", hours_ago=50 - 10 * n) for n in range(3)}
    forged(kb, "mm-new-ui", None)
    kb.index()
    assert flagged(kb) == set()
    forged(kb, "mm-new-ui-2", None)
    kb.index()
    assert flagged(kb) == olds


def test_a_time_from_the_future_is_a_claim() -> None:
    now_ms = int(FIXED_NOW.timestamp() * 1000)
    assert from_the_future("2099-01-01T00:00:00.000Z", now_ms)
    assert from_the_future((FIXED_NOW + timedelta(minutes=6)).isoformat(), now_ms)
    assert not from_the_future((FIXED_NOW + timedelta(minutes=4)).isoformat(), now_ms)
    assert not from_the_future("0001-01-01T00:00:00Z", now_ms)
    assert not from_the_future(None, now_ms) and not from_the_future("not a time", now_ms)
