"""Vectors per distinct text, stored beside each index generation.

    gen-NNNN/vectors.json   {"modelId": …, "dimension": 384}: the space the vectors live in
    gen-NNNN/vectors.f32    float32 rows, appended
    gen-NNNN/vectors.keys   one text key per line, appended after its row
    gen-NNNN/vectors.texts  `["key", "text"]` JSON lines, appended before the keys: what was
                            embedded (duplicates check identifiers in it, clusters name terms)

A key is a hash of (model id, text), so a text is embedded once however many steps share it,
and vectors of different models never mix: a store of another model is ignored and rebuilt.
The writer appends rows, then their keys (each fsync'd), before the Tantivy commit that makes
documents referring to them visible; a reader reads the key file first and maps as many rows
as it names, so it never sees a key without its vector. `knowhow reindex` builds a new
generation, and with it a new store: it copies the vectors the generation it replaces already
holds (same key, same model: the same vector), so only texts new since then are embedded.
"""

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from engine.core import atomic_write
from engine.embedding.embedder import Vectors

META_FILE = "vectors.json"
ROWS_FILE = "vectors.f32"
KEYS_FILE = "vectors.keys"
TEXTS_FILE = "vectors.texts"
KEY_BYTES = 8


@lru_cache(maxsize=16_384)
def text_key(model_id: str, text: str) -> str:
    """The store key of a text under a model (16 hex chars; cached: most steps share their
    texts with earlier steps)."""
    return hashlib.blake2b(f"{model_id}\0{text}".encode(), digest_size=KEY_BYTES).hexdigest()


def key_number(key: str) -> int:
    """A key as the unsigned integer it spells (its fast-field form, `schema.KEY_COLUMNS`)."""
    return int(key, 16)


@dataclass(frozen=True, slots=True)
class VectorSpace:
    model_id: str
    dimension: int


def read_space(generation: Path) -> VectorSpace | None:
    """The space of the generation's stored vectors (None: no store yet, or unreadable)."""
    try:
        meta = orjson.loads((generation / META_FILE).read_bytes())
        return VectorSpace(str(meta["modelId"]), int(meta["dimension"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _read_keys(generation: Path) -> list[str]:
    """Complete key lines only (a line being appended has no newline yet)."""
    try:
        data = (generation / KEYS_FILE).read_bytes()
    except FileNotFoundError:
        return []
    return data[: data.rfind(b"\n") + 1].decode("ascii").split()


class VectorWriter:
    """Appends the vectors of new texts to a generation's store (the index writer's helper)."""

    def __init__(self, generation: Path, space: VectorSpace, reuse: Path | None = None) -> None:
        """`reuse`: another generation whose vectors of this space may be copied instead of
        embedded again (the one a rebuild replaces)."""
        self.generation = generation
        if read_space(generation) != space:
            # Another model's vectors (or none): start this model's store afresh.
            for name in (ROWS_FILE, TEXTS_FILE, KEYS_FILE):
                (generation / name).unlink(missing_ok=True)
            payload = {"modelId": space.model_id, "dimension": space.dimension}
            atomic_write(generation / META_FILE, orjson.dumps(payload))
        self.space = space
        self.keys = set(_read_keys(generation))
        rows = (generation / ROWS_FILE).stat().st_size if (generation / ROWS_FILE).exists() else 0
        if rows != len(self.keys) * space.dimension * 4:
            # Rows without keys (a crash between the two appends): cut back to the keys.
            with open(generation / ROWS_FILE, "ab") as f:
                f.truncate(len(self.keys) * space.dimension * 4)
        self._donor = VectorReader(reuse) if reuse is not None and reuse != generation else None
        if self._donor is not None and self._donor.space != space:
            self._donor = None

    def reuse(self, texts: dict[str, str]) -> list[str]:
        """Copy the vectors of the texts (key -> text) that the donor generation holds;
        returns the keys still to be embedded."""
        keys = list(texts)
        if self._donor is None:
            return keys
        try:
            self._donor.refresh()
            rows = self._donor.rows
            found = [key for key in keys if key in rows]
            vectors = np.asarray(self._donor.matrix[[rows[key] for key in found]])
        except (OSError, ValueError):  # a damaged store (rows cut short): embed them all
            self._donor = None
            return keys
        self.append(found, vectors, [texts[key] for key in found])
        return [key for key in keys if key not in rows]

    def append(self, keys: list[str], vectors: Vectors, texts: list[str]) -> None:
        if not keys:
            return
        _append(self.generation / ROWS_FILE, np.ascontiguousarray(vectors, "<f4").tobytes())
        lines = b"".join(orjson.dumps([k, t]) + b"\n" for k, t in zip(keys, texts, strict=True))
        _append(self.generation / TEXTS_FILE, lines)
        _append(self.generation / KEYS_FILE, "".join(k + "\n" for k in keys).encode("ascii"))
        self.keys.update(keys)


def _append(path: Path, data: bytes) -> None:
    with open(path, "ab") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


class KeyNumbers:
    """The row of each key by its number (`key_number`: the form search's fast fields hold),
    looked up for a few hundred documents at once."""

    def __init__(self, keys: list[str]) -> None:
        numbers = np.array([key_number(key) for key in keys], np.uint64)
        self._order = np.argsort(numbers, kind="stable")
        self._sorted = numbers[self._order]

    def rows_of(self, numbers: list[int | float | bool | None]) -> "np.ndarray[Any, Any]":
        """The row of each number (-1: none, or no such key)."""
        wanted = np.array([n if isinstance(n, int) else 0 for n in numbers], np.uint64)
        if not len(self._sorted):
            return np.full(len(wanted), -1)
        at = np.minimum(np.searchsorted(self._sorted, wanted), len(self._sorted) - 1)
        given = np.array([isinstance(n, int) for n in numbers], bool)
        found = given & (self._sorted[at] == wanted)
        return np.where(found, self._order[at], -1)


class VectorReader:
    """A generation's vectors for search: the key table and a memory map of the rows, reloaded
    when the writer appended (one stat per call)."""

    def __init__(self, generation: Path) -> None:
        self.generation = generation
        self.space = read_space(generation)
        self._size = -1
        self.rows: dict[str, int] = {}
        self.numbered = KeyNumbers([])
        self.keys: list[str] = []
        self.matrix: Vectors = np.zeros((0, self.space.dimension if self.space else 0), np.float32)

    def refresh(self) -> None:
        try:
            size = (self.generation / KEYS_FILE).stat().st_size
        except FileNotFoundError:
            size = 0
        if size == self._size or self.space is None:
            return
        keys = _read_keys(self.generation)
        dim = self.space.dimension
        if keys:
            self.matrix = np.memmap(
                self.generation / ROWS_FILE, dtype="<f4", mode="r", shape=(len(keys), dim)
            )
        self.rows = {key: row for row, key in enumerate(keys)}
        self.numbered = KeyNumbers(keys)
        self.keys = keys
        self._size = size

    def texts(self) -> dict[str, str]:
        """What was embedded, by key (read on demand: search never needs it). A store written
        before texts were kept has none: such keys are missing here."""
        try:
            data = (self.generation / TEXTS_FILE).read_bytes()
        except FileNotFoundError:
            return {}
        pairs = (orjson.loads(line) for line in data[: data.rfind(b"\n") + 1].splitlines())
        return {str(key): str(text) for key, text in pairs}
