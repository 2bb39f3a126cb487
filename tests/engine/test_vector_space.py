"""An index whose vectors are of another model (or model execution) is never searched with this
knowhow's query vectors: a reader answers by keywords and says why; a writer (`knowhow index`,
the live index) rebuilds it, and `knowhow reindex` embeds every text again."""

from pathlib import Path

import numpy as np
import orjson
import pytest

from engine import KnowledgeEngine
from engine.core import SearchInput, StaleIndex, validate
from engine.embedding import DIMENSION, META_FILE, MODEL_ID, ROWS_FILE
from engine.index import IndexLayout, IndexWriter, rebuild
from engine.live import LiveIndex, built_by_other_version
from tests.conftest import FIXED_NOW, Knowledge

OLD_MODEL_ID = "all-MiniLM-L6-v2-onnx-int8"
"""The space of older indexes (the same weights, run as float products)."""
PARAPHRASE = "open the vault with my secret"
"""No word of it is in the records: only the semantic leg finds the unlock step."""


@pytest.fixture
def old_index(kb: Knowledge) -> Path:
    """A real index labelled as embedded by the old model, its vectors zeroed (so a copy of
    them would show). Its documents' keys are this model's, which nothing here depends on:
    every decision reads the space in `vectors.json`."""
    kb.session("mm-unlock", hours_ago=3, goal="Unlock the wallet", flow_tags=["unlock"])
    kb.step("mm-unlock", "mm_type", test_id="unlock-password", text="pw", screen="unlock")
    kb.session("mm-send", hours_ago=5, goal="Send ETH to a friend", flow_tags=["send"])
    kb.step("mm-send", test_id="coin-overview-send", screen="send")
    kb.index()
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None
    (generation / META_FILE).write_bytes(
        orjson.dumps({"modelId": OLD_MODEL_ID, "dimension": DIMENSION})
    )
    rows = generation / ROWS_FILE
    rows.write_bytes(bytes(rows.stat().st_size))
    return generation


def search(kb: Knowledge, query: str, **fields: object):  # type: ignore[no-untyped-def]
    """A search without indexing first (a reader: the CLI's search, a server without the
    writer)."""
    engine = KnowledgeEngine(kb.root, kb.index_dir, now=lambda: FIXED_NOW)
    return engine.search(validate(SearchInput, {"query": query, **fields}))


def stored_space(generation: Path) -> str:
    return str(orjson.loads((generation / META_FILE).read_bytes())["modelId"])


def test_a_reader_answers_by_keywords_and_says_which_model_the_index_holds(
    kb: Knowledge, old_index: Path
) -> None:
    for mode in ("hybrid", "semantic"):
        page = search(kb, "unlock the wallet", mode=mode)
        assert page.modeUsed == "keyword"
        assert page.degraded is not None
        assert OLD_MODEL_ID in page.degraded and MODEL_ID in page.degraded
        assert "knowhow reindex" in page.degraded
    assert search(kb, PARAPHRASE).total == 0  # no old vector compared with a new query
    assert stored_space(old_index) == OLD_MODEL_ID  # a reader changes nothing


def test_a_writer_refuses_to_extend_it(old_index: Path) -> None:
    with pytest.raises(StaleIndex) as raised:
        IndexWriter(old_index)
    assert OLD_MODEL_ID in raised.value.message and "reindex" in raised.value.message
    assert built_by_other_version(old_index)


def test_knowhow_index_rebuilds_it_in_this_models_space(kb: Knowledge, old_index: Path) -> None:
    report = kb.index()
    assert report.sessions_indexed == 2
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None and generation != old_index
    assert stored_space(generation) == MODEL_ID
    page = search(kb, PARAPHRASE)
    assert page.modeUsed == "hybrid" and page.degraded is None
    assert page.results[0].stepId == "mm-unlock/0001-mm_type"


def test_reindex_embeds_every_text_again(kb: Knowledge, old_index: Path) -> None:
    rebuild(kb.store, kb.index_dir)
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None and stored_space(generation) == MODEL_ID
    rows = np.fromfile(generation / ROWS_FILE, np.float32).reshape(-1, DIMENSION)
    assert len(rows) and np.all(np.abs(rows).sum(axis=1) > 0)  # none copied from the old


def test_the_live_writer_rebuilds_it(kb: Knowledge, old_index: Path) -> None:
    live = LiveIndex(kb.store, kb.index_dir, retry_seconds=0.2)
    try:
        assert live.start(wait=30) and live.is_writer
        generation = IndexLayout(kb.index_dir).current()
        assert generation is not None and generation != old_index
        assert stored_space(generation) == MODEL_ID
        assert search(kb, PARAPHRASE).results[0].stepId == "mm-unlock/0001-mm_type"
    finally:
        live.close()
