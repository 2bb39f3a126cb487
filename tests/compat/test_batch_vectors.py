"""A `run_steps` batch's vector is pooled from its actions' texts: each action is embedded as a
step doing it alone is (and shared with such steps), the batch's vector is the normalised mean
of its parts' vectors. A first build of today's records then embeds about as much as one of the
same actions recorded one by one (`scripts/bench_formats.py`)."""

from collections.abc import Callable, Sequence
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from engine.embedding import (
    MODEL_ID,
    Embedder,
    VectorReader,
    Vectors,
    load_embedder,
    pooled_key,
    text_key,
)
from engine.index import IndexLayout, rebuild
from tests.compat.mm_format import Act, Session, write_new, write_old
from tests.compat.scenarios import HOME, SEND, SEND_ACTS, batched_send_flow, send_flow
from tests.conftest import FIXED_NOW, Knowledge

CLICK_SEND = (
    'click button "Send" (coin overview send) on the home screen leading to the send screen'
)
TYPE_RECIPIENT = "type into (recipient address input) on the send screen"
TYPE_AMOUNT = "type into (send amount input) on the send screen"
SEND_PARTS = [CLICK_SEND, TYPE_RECIPIENT, TYPE_AMOUNT]
"""The texts of `SEND_ACTS` as a batch's parts: those of the same actions done one by one."""


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The texts the real embedder is asked to embed from now on."""
    texts: list[str] = []
    real = Embedder.embed

    def counting(
        self: Embedder, batch: Sequence[str], progress: Callable[[], None] | None = None
    ) -> Vectors:
        texts.extend(batch)
        return real(self, batch, progress)

    monkeypatch.setattr(Embedder, "embed", counting)
    return texts


def stored(kb: Knowledge) -> VectorReader:
    """The live generation's vectors."""
    current = IndexLayout(kb.index_dir).current()
    assert current is not None
    vectors = VectorReader(current)
    vectors.refresh()
    return vectors


def row(vectors: VectorReader, key: str) -> Vectors:
    vector: Vectors = vectors.matrix[vectors.rows[key]]
    return vector


def test_a_batch_s_vector_is_the_normalised_mean_of_its_actions_vectors(kb: Knowledge) -> None:
    write_new(kb.root, batched_send_flow("mm-send-b"))
    kb.index()
    vectors = stored(kb)
    parts = load_embedder().embed(SEND_PARTS).astype(np.float64).sum(axis=0)
    expected = (parts / np.linalg.norm(parts)).astype(np.float32)
    assert np.array_equal(row(vectors, pooled_key(MODEL_ID, SEND_PARTS)), expected)
    texts = vectors.texts()
    assert texts[pooled_key(MODEL_ID, SEND_PARTS)] == ", then ".join(SEND_PARTS)
    assert texts[text_key(MODEL_ID, TYPE_AMOUNT)] == TYPE_AMOUNT  # each part stored as a text
    assert text_key(MODEL_ID, ", then ".join(SEND_PARTS)) not in texts  # never the sentence


def test_a_single_step_s_vector_is_its_own_text_s(kb: Knowledge) -> None:
    write_old(kb.root, send_flow("mm-send-a"))
    kb.index()
    [alone] = load_embedder().embed([CLICK_SEND])
    assert np.array_equal(row(stored(kb), text_key(MODEL_ID, CLICK_SEND)), alone)


def test_a_batch_of_actions_done_before_embeds_no_new_text(kb: Knowledge, sent: list[str]) -> None:
    write_old(kb.root, send_flow("mm-send-a"))
    kb.index()
    assert CLICK_SEND in sent and TYPE_AMOUNT in sent
    sent.clear()
    write_new(kb.root, batched_send_flow("mm-send-b"))
    kb.index()
    assert sent == []
    assert pooled_key(MODEL_ID, SEND_PARTS) in stored(kb).rows


def test_a_failed_batch_pools_its_failure_as_a_part_of_its_own(
    kb: Knowledge, sent: list[str]
) -> None:
    session = Session("mm-send-f", FIXED_NOW - timedelta(hours=4), flow_tags=["send"])
    session.step(Act("describe_screen"), HOME)
    session.batch(SEND_ACTS, SEND, ok=False, error=("MM_BATCH_FAILED", "Batch stopped"))
    write_new(kb.root, session)
    kb.index()
    failure = "Failed: Batch stopped"
    assert failure in sent
    assert pooled_key(MODEL_ID, [*SEND_PARTS, failure]) in stored(kb).rows


def test_a_batch_of_one_action_is_embedded_as_the_step_doing_it_alone(
    kb: Knowledge, sent: list[str]
) -> None:
    session = Session("mm-send-one", FIXED_NOW - timedelta(hours=4), flow_tags=["send"])
    session.step(Act("describe_screen"), HOME)
    session.batch(SEND_ACTS[:1], SEND)
    write_new(kb.root, session)
    kb.index()
    assert CLICK_SEND in sent
    assert np.array_equal(
        row(stored(kb), text_key(MODEL_ID, CLICK_SEND)), load_embedder().embed([CLICK_SEND])[0]
    )


def test_search_by_meaning_finds_a_batch_by_one_of_its_actions(kb: Knowledge) -> None:
    ids = write_new(kb.root, batched_send_flow("mm-send-b"))
    page = kb.search("enter who receives the money", mode="semantic")
    assert page.modeUsed == "semantic"
    assert page.steps()[0].stepId == ids[2]


def test_a_rebuild_and_live_indexing_store_the_same_pooled_vector(tmp_path: Path) -> None:
    live = Knowledge(tmp_path / "live")
    write_old(live.root, send_flow("mm-send-a"))
    live.index()
    write_new(live.root, batched_send_flow("mm-send-b"))
    live.index()  # the batch's session indexed as it arrives
    built = Knowledge(tmp_path / "built")
    write_old(built.root, send_flow("mm-send-a"))
    write_new(built.root, batched_send_flow("mm-send-b"))
    built.index()  # a first build of both
    key = pooled_key(MODEL_ID, SEND_PARTS)
    assert np.array_equal(row(stored(live), key), row(stored(built), key))
    rebuild(built.store, built.index_dir)  # copies it from the generation it replaces
    assert np.array_equal(row(stored(built), key), row(stored(live), key))


def test_a_pooled_key_is_never_a_text_s_key() -> None:
    """A vector embedded from a batch's whole sentence (as older versions stored it) is never
    taken for the pool of its parts, nor a pool for another."""
    sentence = ", then ".join(SEND_PARTS)
    assert pooled_key(MODEL_ID, SEND_PARTS) != text_key(MODEL_ID, sentence)
    assert pooled_key(MODEL_ID, [sentence]) != text_key(MODEL_ID, sentence)
    assert pooled_key(MODEL_ID, ["a, b", "c"]) != pooled_key(MODEL_ID, ["a", "b, c"])
