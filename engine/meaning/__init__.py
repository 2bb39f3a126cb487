"""Search by meaning: the semantic leg (query vector against the stored texts), its
fusion with the keyword results, and the memory groupings built on vectors (duplicates,
clusters). Imports the layers up to `engine.query`; never `engine.history` (they sit side by
side).
"""

from engine.meaning.clusters import cluster
from engine.meaning.duplicates import Related, find_duplicates
from engine.meaning.fusion import (
    RERANK_WINDOW,
    SENTENCE_MEANING,
    SENTENCE_MEANING_AT_MOST,
    Hit,
    descending,
    fuse,
    keyword_scores,
    semantic_weight,
    settle,
)
from engine.meaning.join import (
    CHECKED_BY,
    QueryEmbedding,
    answer_mode,
    meaning_fields,
    query_embedding,
    start_meaning,
    with_meaning,
)
from engine.meaning.semantic_leg import (
    EMBED_TIMEOUT_ENV,
    OBSERVATION_WEIGHT,
    SCREEN_WEIGHT,
    EmbeddingTimeout,
    KeyRows,
    SemanticLeg,
    configured_embed_timeout,
    embed_soon,
    embeddable,
    top_rows,
)

__all__ = [
    "CHECKED_BY",
    "EMBED_TIMEOUT_ENV",
    "OBSERVATION_WEIGHT",
    "RERANK_WINDOW",
    "SCREEN_WEIGHT",
    "SENTENCE_MEANING",
    "SENTENCE_MEANING_AT_MOST",
    "EmbeddingTimeout",
    "Hit",
    "KeyRows",
    "QueryEmbedding",
    "Related",
    "SemanticLeg",
    "answer_mode",
    "cluster",
    "configured_embed_timeout",
    "descending",
    "embed_soon",
    "embeddable",
    "find_duplicates",
    "fuse",
    "keyword_scores",
    "meaning_fields",
    "query_embedding",
    "semantic_weight",
    "settle",
    "start_meaning",
    "top_rows",
    "with_meaning",
]
