"""One superseded filter on every retrieval path: hidden by default, flagged on request."""

from engine.inputs import LastInput, SearchInput
from tests.conftest import Knowledge
from tests.engine.test_supersede import after_rename, before_rename


def renamed(kb: Knowledge) -> tuple[str, str]:
    old = before_rename(kb)
    new = after_rename(kb)
    kb.index()
    return old, new


def test_search_hides_superseded_steps_unless_asked(kb: Knowledge) -> None:
    old, new = renamed(kb)
    engine = kb.engine()
    hidden = engine.search(SearchInput(query="click send"))
    assert old not in {r.stepId for r in hidden.results}
    assert new in {r.stepId for r in hidden.results}
    shown = engine.search(SearchInput(query="click send", includeSuperseded=True))
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
