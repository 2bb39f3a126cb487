"""The embedding model as loaded (`engine.embedding.model_graph`): int8 lookup tables give the
packaged graph's vectors bit for bit; integer products of the linear layers give vectors close to
the float graph's, the same for a text alone or in any batch."""

import tempfile
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from engine.embedding import (
    ALL_CORES,
    BULK_TEXTS,
    Embedder,
    embedder,
    embedder_for,
    load_embedder,
    model_graph,
    model_path,
)

TEXTS = [
    "unlock the wallet with the password",
    "click Send on the home screen",
    "Bestätigen Sie die Transaktion 確認",
    "a" * 2000,  # truncated at the model's 256 tokens: the last position row is looked up
    "!",
    "swap ETH for DAI, then review the quote and confirm the swap on the confirm screen",
]
LINEAR_LAYERS = 36
"""6 layers x (query, key, value, attention output, two feed-forward): each weight a MatMul."""


def embedder_of(model: bytes | str) -> Embedder:
    """The packaged model's embedder running another graph of it (bytes, or a file's path)."""
    embedder = Embedder(model_path())
    embedder._session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    return embedder


def test_int8_lookup_tables_embed_exactly_as_the_packaged_graph() -> None:
    tables = embedder_of(model_graph.gather_before_dequantising(model_path().read_bytes()))
    packaged = embedder_of(str(model_path()))  # the file as shipped, folded to float32 tables
    assert tables.embed(TEXTS).tobytes() == packaged.embed(TEXTS).tobytes()
    one_by_one = [tables.embed([text])[0].tobytes() for text in TEXTS]
    assert one_by_one == [packaged.embed([text])[0].tobytes() for text in TEXTS]


def test_integer_products_stay_close_to_the_float_graph() -> None:
    floats = embedder_of(model_graph.gather_before_dequantising(model_path().read_bytes()))
    cosines = np.sum(Embedder(model_path()).embed(TEXTS) * floats.embed(TEXTS), axis=1)
    # Measured on the 100k corpus' texts: 0.9994 mean, 0.9988 lowest.
    assert cosines.min() > 0.99 and cosines.mean() > 0.995, cosines


def test_a_text_embeds_the_same_alone_or_in_any_batch() -> None:
    """Each token's row is quantised with its own range: nothing of the other texts (or of the
    padding) enters a text's vector, as with the float graph."""
    embedder = Embedder(model_path())
    together = embedder.embed(TEXTS)
    assert [embedder.embed([text])[0].tobytes() for text in TEXTS] == [
        row.tobytes() for row in together
    ]
    reversed_batch = embedder.embed(TEXTS[::-1])[::-1]
    assert reversed_batch.tobytes() == together.tobytes()


def test_every_linear_layer_multiplies_int8_weights() -> None:
    packaged = model_path().read_bytes()
    rewritten = model_graph.integer_matmuls(model_graph.gather_before_dequantising(packaged))
    assert rewritten.count(b"MatMulIntegerToFloat") == LINEAR_LAYERS
    assert len(rewritten) < len(packaged) * 1.01  # the weights stay one byte each
    assert model_graph.integer_matmuls(rewritten) == rewritten  # nothing left to rewrite


def test_the_attention_without_its_detours_embeds_bit_for_bit_the_same() -> None:
    """`model_graph.plain_attention` drops what only moved values or guarded against rows that never
    occur: every vector, alone or in a padded batch, is the one the exported graph gives."""
    tables = model_graph.gather_before_dequantising(model_path().read_bytes())
    plain = model_graph.plain_attention(tables)
    assert plain.count(b"IsNaN") == 0 < tables.count(b"IsNaN")
    assert plain.count(b"Shape") < tables.count(b"Shape")
    assert model_graph.plain_attention(plain) == plain  # nothing left to rewrite
    exported, simpler = (
        embedder_of(model_graph.integer_matmuls(tables)),
        embedder_of(model_graph.integer_matmuls(plain)),
    )
    assert simpler.embed(TEXTS).tobytes() == exported.embed(TEXTS).tobytes()
    alone = [simpler.embed([text])[0].tobytes() for text in TEXTS]
    assert alone == [exported.embed([text])[0].tobytes() for text in TEXTS]


def test_a_graph_without_the_patterns_is_left_as_it_was() -> None:
    rewritten = model_graph.gather_before_dequantising(model_path().read_bytes())
    assert rewritten != model_path().read_bytes()
    assert model_graph.gather_before_dequantising(rewritten) == rewritten


def test_without_a_writable_temporary_folder_the_model_loads_from_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    not_a_folder = tmp_path / "a-file"
    not_a_folder.write_text("")  # a folder cannot be made inside it, even by root
    expected = Embedder(model_path()).embed(TEXTS)
    monkeypatch.setattr(tempfile, "tempdir", str(not_a_folder))
    with pytest.raises(OSError):
        tempfile.TemporaryDirectory()
    assert Embedder(model_path()).embed(TEXTS).tobytes() == expected.tobytes()


def test_a_query_tokenized_by_the_search_embeds_as_in_a_batch() -> None:
    """A search tokenizes its query itself and hands the embedding thread the tokens
    (`Embedder.tokenize`, `embed_tokens`): the vector must be bit for bit the one `embed`
    gives the text (a long text truncated the same way, one of a single character too)."""
    model = load_embedder()
    alone = [model.embed_tokens(*model.tokenize(text)).tobytes() for text in TEXTS]
    assert alone == [vector.tobytes() for vector in model.embed(TEXTS)]


def test_one_thread_embeds_what_every_core_embeds() -> None:
    """Searches embed queries on one thread, builds their texts on every core
    (`embedder.SEARCH_THREADS`, `embedder_for`): both must give the same vectors, or a query
    would be compared with texts of a slightly different space."""
    texts = [*TEXTS, *(f"{text} on the home screen" for text in TEXTS)]
    one = Embedder(model_path(), threads=1).embed(texts)
    every = Embedder(model_path(), threads=ALL_CORES).embed(texts)
    assert one.tobytes() == every.tobytes()
    assert embedder_for(1) is load_embedder()
    assert embedder_for(BULK_TEXTS) is not embedder_for(1)


def test_int8_weights_give_the_uint8_graphs_vectors_bit_for_bit() -> None:
    """Where uint8 x int8 products are exact, keeping the weights int8 is a speed-up only."""
    if not embedder._signed_products_exact(ort):
        pytest.skip("this CPU's uint8 x int8 products are not exact: only the uint8 graph runs")
    tables = model_graph.gather_before_dequantising(model_path().read_bytes())
    signed = embedder_of(model_graph.integer_matmuls(tables, signed_weights=True))
    unsigned = embedder_of(model_graph.integer_matmuls(tables, signed_weights=False))
    assert signed.embed(TEXTS).tobytes() == unsigned.embed(TEXTS).tobytes()


@pytest.mark.parametrize("exact", [True, False])
def test_the_probe_decides_which_weights_the_model_runs_with(
    exact: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    if exact and not embedder._signed_products_exact(ort):
        pytest.skip("int8 weights would saturate on this CPU: never chosen here")
    rewrite = model_graph.integer_matmuls
    chosen: list[bool] = []

    def recorded(model: bytes, signed_weights: bool = False) -> bytes:
        chosen.append(signed_weights)
        return rewrite(model, signed_weights=signed_weights)

    monkeypatch.setattr(model_graph, "integer_matmuls", recorded)
    monkeypatch.setattr(embedder, "_signed_products_exact", lambda ort: exact)
    expected = Embedder(model_path()).embed(TEXTS)  # under the patches too: compared below
    assert chosen == [exact]
    monkeypatch.undo()
    assert Embedder(model_path()).embed(TEXTS).tobytes() == expected.tobytes()


def test_the_probe_overflows_16_bits_in_every_pair_of_products() -> None:
    """Its answer is `model_graph.PROBE_PRODUCTS` only if every product is added in 32 bits; a CPU
    that adds pairs in 16 bits (saturating) gives another answer, and the uint8 graph is kept."""
    assert 2 * 255 * 127 > 2**15 - 1 and 2 * 255 * -128 < -(2**15)
    session = ort.InferenceSession(
        model_graph.signed_products_probe(), providers=["CPUExecutionProvider"]
    )
    products = session.run(None, {"rows": np.full((4, model_graph.PROBE_DEPTH), 255, np.uint8)})[0]
    exact = bool((products == np.array(model_graph.PROBE_PRODUCTS, np.float32)).all())
    assert embedder._signed_products_exact(ort) is exact


def test_a_probe_that_cannot_run_keeps_the_uint8_graph() -> None:
    """An ONNX Runtime without the op (or any failure of the probe) is no reason to fail
    loading: the uint8 graph is exact everywhere."""

    class Unloadable:
        SessionOptions = ort.SessionOptions

        @staticmethod
        def InferenceSession(*args: object, **kwargs: object) -> None:
            raise RuntimeError("no MatMulIntegerToFloat here")

    assert embedder._signed_products_exact.__wrapped__(Unloadable) is False
