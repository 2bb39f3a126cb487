"""Vectors pooled from the vectors of shorter texts: a `run_steps` batch's, from its actions'.

A batch tells several actions in one record. Embedded as one sentence, nearly every batch is a
text of its own, long and never seen before, and a first build spent most of its time
embedding them (`scripts/bench_formats.py`). Its actions, told one by one, are the texts single
steps doing them have, which the store holds already or will share with many other steps. So a
batch's vector is the normalised mean of its parts' vectors (`mean_vector`), each part embedded
once like any text (`engine.embedding.vectors`).

A pooled vector has its own key form (`engine.embedding.vectors.pooled_key`: a hash of its
parts, in another domain than `text_key`'s): a generation never mistakes a sentence's vector
for a pool of the same words, or a pool for another pool, and a rebuild copies a pooled
vector only where its parts are the same.
"""

from typing import NamedTuple

import numpy as np

from engine.embedding.embedder import Vectors

POOLED_DOMAIN = b"knowhow-pooled"
"""`blake2b`'s personalisation of pooled keys: no text key can equal one."""


class Pooled(NamedTuple):
    """A vector to pool: the text it stands for (stored as what was embedded: shown, grouped,
    read for identifiers) and the keys of its parts, in order."""

    text: str
    parts: tuple[str, ...]


def mean_vector(parts: Vectors) -> Vectors:
    """The L2-normalised mean of unit vectors (rows), as float32: the direction they share.
    Summed in float64, so that the result depends on the rows alone."""
    total = parts.astype(np.float64).sum(axis=0)
    norm = max(float(np.linalg.norm(total)), 1e-12)
    mean: Vectors = (total / norm).astype(np.float32)
    return mean
