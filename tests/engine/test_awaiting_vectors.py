"""Steps a writer indexed while its embedding model could not load get their vectors from the
next writer that can embed, and until then status says some are missing (`degraded`).

Before, such a writer (a damaged model file) dropped the texts it could not embed: their steps
were found by keywords only, for good, even after a healthy writer took over, and status said
nothing was wrong.
"""

from pathlib import Path

import pytest

from engine import KnowledgeEngine, LiveIndex
from engine.index import AWAITING_FILE, IndexLayout
from tests.conftest import Knowledge
from tests.engine.test_live import wait_for

MODEL_PATH_ENV = "KNOWHOW_MODEL_PATH"


def write_with(kb: Knowledge) -> None:
    """One writer's life: it takes the lease, reconciles what changed, and closes."""
    live = LiveIndex(kb.store, kb.index_dir, retry_seconds=0.1)
    try:
        assert live.start(wait=60)
        wait_for(lambda: live.is_writer, timeout=60)
        wait_for(lambda: live.status(dict).indexLag.pendingSessions == 0, timeout=60)
    finally:
        live.close()


def test_vectors_a_writer_could_not_make_are_made_by_the_next_one(
    kb: Knowledge, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kb.session("mm-vec-a", goal="Send ETH")
    kb.step("mm-vec-a", test_id="coin-overview-send")
    kb.index()
    engine = KnowledgeEngine(kb.root, kb.index_dir)
    held = engine.semantic_status()["vectors"]
    assert isinstance(held, int) and held > 0

    damaged = tmp_path / "model.onnx"
    damaged.write_bytes(b"not a model" * 1000)
    monkeypatch.setenv(MODEL_PATH_ENV, str(damaged))
    kb.session("mm-vec-b", goal="Swap tokens")
    kb.step("mm-vec-b", test_id="swap-quote-review-button")
    write_with(kb)
    generation = IndexLayout(kb.index_dir).current()
    assert generation is not None and (generation / AWAITING_FILE).exists()

    monkeypatch.delenv(MODEL_PATH_ENV)
    engine.refresh()
    waiting = engine.semantic_status()
    assert isinstance(waiting["awaitingVectors"], int) and waiting["awaitingVectors"] > 0
    assert "no vectors yet" in str(waiting["degraded"])
    assert waiting["vectors"] == held

    write_with(kb)  # a healthy writer takes over
    engine.refresh()
    filled = engine.semantic_status()
    assert filled["awaitingVectors"] == 0 and filled["degraded"] is None
    assert isinstance(filled["vectors"], int) and filled["vectors"] > held
    assert not (generation / AWAITING_FILE).exists()
