"""One superseded filter on every retrieval path: hidden by default, flagged on request.

The other paths have their tests beside their features: priorKnowledge in test_supersede.py,
duplicates and clusters in test_duplicates.py, batch-search in tests/server/test_cli.py.
"""

import pytest

from engine.core import LastInput, SearchInput, SearchMode, TimelineInput
from tests.conftest import Knowledge
from tests.engine.test_supersede import after_rename, before_rename


def renamed(kb: Knowledge) -> tuple[str, str]:
    old = before_rename(kb)
    new = after_rename(kb)
    kb.index()
    return old, new


@pytest.mark.parametrize("mode", ["keyword", "semantic", "hybrid"])
def test_search_hides_superseded_steps_unless_asked(kb: Knowledge, mode: SearchMode) -> None:
    old, new = renamed(kb)
    engine = kb.engine()
    hidden = engine.search(SearchInput(query="click send", mode=mode))
    assert hidden.modeUsed == mode
    assert old not in {r.stepId for r in hidden.results}
    assert new in {r.stepId for r in hidden.results}
    shown = engine.search(SearchInput(query="click send", mode=mode, includeSuperseded=True))
    flagged = {r.stepId: r for r in shown.results}[old]
    assert flagged.isSuperseded is True and flagged.supersededAt
    assert flagged.supersededBy is not None and flagged.supersededBy.stepId == new
    assert flagged.supersededBy.target == "testId:wallet-send-button"
    assert {r.stepId: r for r in shown.results}[new].isSuperseded is None


def test_last_hides_superseded_steps_unless_asked(kb: Knowledge) -> None:
    old, new = renamed(kb)
    engine = kb.engine()
    hidden = engine.last(LastInput(n=50, scope="all"))
    assert old not in {s.stepId for s in hidden.steps} and new in {s.stepId for s in hidden.steps}
    shown = engine.last(LastInput(n=50, scope="all", includeSuperseded=True))
    assert {s.stepId: s for s in shown.steps}[old].isSuperseded is True
    assert hidden.total == shown.total - 1


def test_timeline_shows_history_as_it_was_with_superseded_steps_flagged(kb: Knowledge) -> None:
    old, new = renamed(kb)
    around = kb.engine().timeline(TimelineInput(anchor=new, scope="all", before=50))
    rows = {r.stepId: r for r in [*around.before, around.anchor]}
    assert rows[old].isSuperseded is True
    assert rows[old].supersededBy is not None and rows[old].supersededBy.stepId == new
    assert rows[new].isSuperseded is False


def test_a_timeline_found_by_query_never_anchors_on_a_superseded_step(kb: Knowledge) -> None:
    old, new = renamed(kb)
    around = kb.engine().timeline(TimelineInput(query="coin-overview-send"))
    assert around.anchor.stepId == new != old
