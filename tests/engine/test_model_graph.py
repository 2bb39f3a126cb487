"""The embedding model loaded with int8 lookup tables (`engine.model_graph`) gives the vectors of
the packaged graph, bit for bit."""

import tempfile
from pathlib import Path

import onnxruntime as ort
import pytest

from engine.embedder import Embedder, model_path
from engine.model_graph import gather_before_dequantising

TEXTS = [
    "unlock the wallet with the password",
    "click Send on the home screen",
    "Bestätigen Sie die Transaktion 確認",
    "a" * 2000,  # truncated at the model's 256 tokens: the last position row is looked up
    "!",
    "swap ETH for DAI, then review the quote and confirm the swap on the confirm screen",
]


def test_the_rewritten_graph_embeds_exactly_as_the_packaged_one() -> None:
    rewritten = Embedder(model_path())
    packaged = Embedder(model_path())
    packaged._session = ort.InferenceSession(  # the file as shipped, folded to float32 tables
        str(model_path()), providers=["CPUExecutionProvider"]
    )
    ours, theirs = rewritten.embed(TEXTS), packaged.embed(TEXTS)
    assert ours.tobytes() == theirs.tobytes()
    one_by_one = [rewritten.embed([text])[0].tobytes() for text in TEXTS]
    assert one_by_one == [packaged.embed([text])[0].tobytes() for text in TEXTS]


def test_a_graph_without_the_pattern_is_left_as_it_was() -> None:
    rewritten = gather_before_dequantising(model_path().read_bytes())
    assert rewritten != model_path().read_bytes()
    assert gather_before_dequantising(rewritten) == rewritten


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
