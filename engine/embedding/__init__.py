"""The local sentence model and what it produces: the packaged ONNX model and its
graph rewrites (`model_graph`, loaded only with the model), the embedder, the vectors kept per
distinct text beside each index generation (and those pooled from them), and near-identical texts
grouped. Imports
`engine.core` and `engine.records`.
"""

from engine.embedding.embedder import (
    ALL_CORES,
    BULK_TEXTS,
    DIMENSION,
    MODEL_ID,
    MODEL_PATH_ENV,
    Embedder,
    ModelUnavailable,
    Vectors,
    embedder_for,
    load_embedder,
    model_path,
    session_options,
)
from engine.embedding.pooled import Pooled
from engine.embedding.text_groups import DEFAULT_THRESHOLD, GroupCache, TextGroups, identifiers
from engine.embedding.vectors import (
    KEYS_FILE,
    META_FILE,
    ROWS_FILE,
    TEXTS_FILE,
    KeyNumbers,
    StoreCheck,
    VectorReader,
    VectorSpace,
    VectorWriter,
    key_number,
    pooled_key,
    read_space,
    text_key,
)

__all__ = [
    "ALL_CORES",
    "BULK_TEXTS",
    "DEFAULT_THRESHOLD",
    "DIMENSION",
    "KEYS_FILE",
    "META_FILE",
    "MODEL_ID",
    "MODEL_PATH_ENV",
    "ROWS_FILE",
    "TEXTS_FILE",
    "Embedder",
    "GroupCache",
    "KeyNumbers",
    "ModelUnavailable",
    "Pooled",
    "StoreCheck",
    "TextGroups",
    "VectorReader",
    "VectorSpace",
    "VectorWriter",
    "Vectors",
    "embedder_for",
    "identifiers",
    "key_number",
    "load_embedder",
    "model_path",
    "pooled_key",
    "read_space",
    "session_options",
    "text_key",
]
