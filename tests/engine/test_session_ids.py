"""One rule for session ids: a name the tools accept is a name discovery finds, and back.

A session recorded under an id that discovery then skips would be searchable for a moment and
lost at the next `knowhow index`; a folder discovery lists under an id the tools refuse could
never be scoped or summarized.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.core import InvalidInput, validate_session_id
from engine.records import KnowledgeStore, SessionMetadata
from tests.conftest import Knowledge

NAME_CHARACTERS = "abcXYZ019._-~ "


def accepted(name: str) -> bool:
    try:
        validate_session_id(name)
    except InvalidInput:
        return False
    return True


@given(st.text(NAME_CHARACTERS, min_size=1, max_size=12))
def test_discovery_lists_exactly_the_folders_the_tools_accept(
    tmp_path_factory: pytest.TempPathFactory, name: str
) -> None:
    root = tmp_path_factory.mktemp("root")
    if name in (".", ".."):
        return  # not a folder name at all
    (root / name / "steps").mkdir(parents=True)
    assert KnowledgeStore(root).session_ids() == ([name] if accepted(name) else [])


@pytest.mark.parametrize("session_id", [".hidden-sess", ".mm-abc-123", "._x-"])
def test_a_hidden_session_id_is_refused_before_anything_is_written(
    kb: Knowledge, session_id: str
) -> None:
    with pytest.raises(InvalidInput) as raised:
        kb.store.write_session(SessionMetadata(sessionId=session_id, createdAt="2026-01-15"))
    assert raised.value.field == "sessionId"
    with pytest.raises(InvalidInput):
        kb.store.record_step(kb.record(session_id))
    assert not kb.root.exists() or not any(kb.root.iterdir())


def test_every_session_the_store_writes_survives_a_full_index(kb: Knowledge) -> None:
    """What record_step accepted is found again after `knowhow index` from the files."""
    written = []
    for session_id in ("mm-plain1", "send.flow_2", "_under-score", "-dash-first"):
        kb.session(session_id)
        written.append(kb.step(session_id, test_id="coin-overview-send"))
    report = kb.index()
    assert report.sessions_deleted == 0
    page = kb.search("coin overview send", limit=50)
    assert sorted(r.stepId for r in page.steps()) == sorted(written)
