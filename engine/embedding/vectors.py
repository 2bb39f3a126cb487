"""Vectors per distinct text, stored beside each index generation.

    gen-NNNN/vectors.json   {"modelId": …, "dimension": 384, "checksums": "crc32"}: the space
                            the vectors live in, and that each row has its checksum
    gen-NNNN/vectors.f32    float32 rows, appended
    gen-NNNN/vectors.sums   the CRC-32 of each row (little-endian uint32), appended after it
    gen-NNNN/vectors.texts  `["key", "text"]` JSON lines, appended before the keys: what was
                            embedded (duplicates check identifiers in it, clusters name terms)
    gen-NNNN/vectors.keys   one text key per line, appended last

A key is a hash of (model id, text), so a text is embedded once however many steps share it,
and vectors of different models never mix: a store of another model is ignored and rebuilt. A
`run_steps` batch's vector is the mean of its actions' (`engine.embedding.pooled`): its key
hashes its parts' texts in a domain of its own (`pooled_key`), its row is written once theirs
are, and its line in `vectors.texts` holds the batch's text.
The writer appends rows, their checksums and texts, then their keys (each fsync'd), before the
Tantivy commit that makes documents referring to them visible; a reader reads the key file
first and as many rows as it names, so it never sees a key without its vector. `knowhow
reindex` builds a new generation, and with it a new store: it copies the vectors the generation
it replaces already holds (same key, same model: the same vector), so only texts new since
then are embedded.

The store is part of its generation's integrity (`StoreCheck`, run by
`engine.index.integrity`): metadata that cannot be read beside rows, fewer rows or checksums
than keys, a key that is no key, or a row whose checksum differs is damage (`VectorsDamaged`).
Readers load rows into memory after checking them, never map the file: a mapped file cut short
under a running process kills it with SIGBUS at the next read past its end. A reader that finds
damage keeps the rows that verify (a rebuild copies those, and embeds the rest again) and says
why in `damage` (searches answer by keywords meanwhile); a writer never extends a damaged store
and never fills missing rows with anything. A store written before checksums were kept
(metadata without `checksums`) is checked by its size only, until its writer adds them.
"""

import hashlib
import os
import re
import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import orjson

from engine.core import VectorsDamaged, atomic_write
from engine.embedding.embedder import Vectors
from engine.embedding.pooled import POOLED_DOMAIN, Pooled, mean_vector

META_FILE = "vectors.json"
ROWS_FILE = "vectors.f32"
SUMS_FILE = "vectors.sums"
KEYS_FILE = "vectors.keys"
TEXTS_FILE = "vectors.texts"
STORE_FILES = (META_FILE, ROWS_FILE, SUMS_FILE, TEXTS_FILE, KEYS_FILE)
KEY_BYTES = 8
CHECKSUMS = "crc32"
SUM = np.dtype("<u4")


@lru_cache(maxsize=16_384)
def text_key(model_id: str, text: str) -> str:
    """The store key of a text under a model (16 hex chars; cached: most steps share their
    texts with earlier steps)."""
    return hashlib.blake2b(f"{model_id}\0{text}".encode(), digest_size=KEY_BYTES).hexdigest()


def pooled_key(model_id: str, parts: list[str]) -> str:
    """The store key of the mean of the vectors of texts `parts` under a model (as `text_key`'s,
    in a domain of its own: `engine.embedding.pooled`)."""
    data = orjson.dumps([model_id, *parts])
    return hashlib.blake2b(data, digest_size=KEY_BYTES, person=POOLED_DOMAIN).hexdigest()


def key_number(key: str) -> int:
    """A key as the unsigned integer it spells (its fast-field form, `schema.KEY_COLUMNS`)."""
    return int(key, 16)


@dataclass(frozen=True, slots=True)
class VectorSpace:
    model_id: str
    dimension: int

    @property
    def row_bytes(self) -> int:
        return self.dimension * 4


@dataclass(frozen=True, slots=True)
class StoreMeta:
    space: VectorSpace
    checksums: bool
    """Whether each row has its checksum (`vectors.sums`)."""


def read_space(generation: Path) -> VectorSpace | None:
    """The space of the generation's stored vectors (None: no store yet, or unreadable)."""
    try:
        meta = read_meta(generation)
    except VectorsDamaged:
        return None
    return meta.space if meta else None


def read_meta(generation: Path) -> StoreMeta | None:
    """The store's metadata; None when there is no store. Metadata missing or unreadable
    beside stored rows or keys is `VectorsDamaged` (not an empty store: what would be built on
    it would drop every stored vector without a word)."""
    try:
        meta = orjson.loads((generation / META_FILE).read_bytes())
        space = VectorSpace(str(meta["modelId"]), int(meta["dimension"]))
        if space.dimension <= 0:
            raise ValueError("dimension")
        return StoreMeta(space, meta.get("checksums") == CHECKSUMS)
    except FileNotFoundError:
        if any((generation / name).exists() for name in (ROWS_FILE, KEYS_FILE)):
            raise VectorsDamaged(
                generation, f"{META_FILE} is missing beside stored vectors"
            ) from None
        return None
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise VectorsDamaged(generation, f"{META_FILE} is unreadable ({exc})") from None


def _write_meta(generation: Path, space: VectorSpace) -> None:
    meta = {"modelId": space.model_id, "dimension": space.dimension, "checksums": CHECKSUMS}
    atomic_write(generation / META_FILE, orjson.dumps(meta))


_KEY = re.compile(rb"[0-9a-f]{16}")


def read_keys(generation: Path) -> list[str]:
    """Complete key lines only (a line being appended has no newline yet); a line that is not
    a key is `VectorsDamaged`."""
    try:
        data = (generation / KEYS_FILE).read_bytes()
    except FileNotFoundError:
        return []
    lines = data[: data.rfind(b"\n") + 1].split()
    if not all(_KEY.fullmatch(line) for line in lines):
        raise VectorsDamaged(generation, f"{KEYS_FILE} holds a line that is no key")
    return [line.decode("ascii") for line in lines]


def row_checksums(data: bytes, row_bytes: int, count: int) -> list[int]:
    """The CRC-32 of each of the first `count` rows of `data`."""
    view = memoryview(data)
    return [zlib.crc32(view[i * row_bytes : (i + 1) * row_bytes]) for i in range(count)]


@dataclass(slots=True)
class VerifiedRows:
    """Rows read from a store and checked against its keys and checksums."""

    matrix: Vectors
    bad: list[int]
    """Positions whose row is missing or fails its checksum."""
    damage: str | None


def read_rows(
    generation: Path, meta: StoreMeta, start: int, stop: int, keys: list[str]
) -> VerifiedRows:
    """Rows `start..stop` (their keys' positions) as float32, each checked: a row past the end
    of the file (cut short) is missing, one whose checksum differs is damaged; both are listed
    in `bad` (their values are zeros here, never used as a vector) and said in `damage`."""
    space, count = meta.space, stop - start
    matrix = np.zeros((count, space.dimension), np.float32)
    if count <= 0:
        return VerifiedRows(matrix, [], None)
    data = _read_span(generation / ROWS_FILE, start * space.row_bytes, count * space.row_bytes)
    whole = len(data) // space.row_bytes
    bad = list(range(start + whole, stop))
    damage = (
        f"{ROWS_FILE} holds {start + whole} of the {len(keys)} rows its keys name" if bad else None
    )
    if whole:
        rows = np.frombuffer(data[: whole * space.row_bytes], "<f4").reshape(whole, space.dimension)
        matrix[:whole] = rows
    if meta.checksums:
        expected = np.frombuffer(_read_span(generation / SUMS_FILE, start * 4, count * 4), SUM)
        failed = [
            start + offset
            for offset, (found, wanted) in enumerate(
                zip(row_checksums(data, space.row_bytes, whole), expected.tolist(), strict=False)
            )
            if found != wanted
        ]
        failed += range(start + len(expected), start + whole)  # rows without a checksum
        if failed:
            bad += failed
            damage = damage or f"row {min(failed)} of {ROWS_FILE} fails its checksum"
    return VerifiedRows(matrix, sorted(bad), damage)


def _read_span(path: Path, offset: int, size: int) -> bytes:
    """Up to `size` bytes at `offset` (fewer when the file is shorter; none when missing)."""
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            return handle.read(size)
    except FileNotFoundError:
        return b""


class StoreCheck:
    """The writer's check of a generation's vector store, part of its integrity check
    (`engine.index.integrity.GenerationCheck`): the store as found whole last is not read
    again while none of its files changed (a few stats)."""

    def __init__(self, generation: Path) -> None:
        self.generation = generation
        self._whole: tuple[tuple[int, int, int], ...] | None = None

    def verify(self, *, full: bool = False) -> None:
        """Raise `VectorsDamaged` naming the first damage found."""
        fingerprint = self._fingerprint()
        if not full and fingerprint == self._whole:
            return
        meta = read_meta(self.generation)
        if meta is not None:
            keys = read_keys(self.generation)
            rows = read_rows(self.generation, meta, 0, len(keys), keys)
            if rows.damage:
                raise VectorsDamaged(self.generation, rows.damage)
        self._whole = fingerprint

    def _fingerprint(self) -> tuple[tuple[int, int, int], ...]:
        stats = []
        for name in STORE_FILES:
            try:
                st = (self.generation / name).stat()
            except FileNotFoundError:
                stats.append((0, -1, 0))
                continue
            stats.append((st.st_ino, st.st_size, st.st_mtime_ns))
        return tuple(stats)


class VectorWriter:
    """Appends the vectors of new texts to a generation's store (the index writer's helper)."""

    def __init__(self, generation: Path, space: VectorSpace, reuse: Path | None = None) -> None:
        """`reuse`: another generation whose vectors of this space may be copied instead of
        embedded again (the one a rebuild replaces). A damaged store raises `VectorsDamaged`
        (the generation is rebuilt): it is never extended, and rows it lacks are never made
        up."""
        self.generation = generation
        self.space = space
        meta = read_meta(generation)
        if meta is None or meta.space != space:
            # No store yet, or another model's vectors: start this model's store afresh.
            for name in STORE_FILES:
                (generation / name).unlink(missing_ok=True)
            _write_meta(generation, space)
        keys = read_keys(generation)
        self.keys = {key: row for row, key in enumerate(keys)}
        """The row of each stored key."""
        self._rows = len(keys)
        legacy = meta is not None and meta.space == space and not meta.checksums
        self._cut_back(checksummed=not legacy)
        if legacy:
            self._add_checksums()
        self._donor = VectorReader(reuse) if reuse is not None and reuse != generation else None
        if self._donor is not None and self._donor.space != space:
            self._donor = None

    def _cut_back(self, *, checksummed: bool) -> None:
        """Rows and checksums of keys never written (a crash between the appends) are cut back
        to the keys; fewer rows or checksums than keys is damage."""
        files = [(ROWS_FILE, self.space.row_bytes)] + [(SUMS_FILE, 4)] * checksummed
        for name, size in files:
            path = self.generation / name
            held = path.stat().st_size if path.exists() else 0
            if held < self._rows * size:
                raise VectorsDamaged(
                    self.generation, f"{name} holds fewer entries than {KEYS_FILE} names"
                )
            if held > self._rows * size:
                os.truncate(path, self._rows * size)

    def _add_checksums(self) -> None:
        """Checksums of a store written before they were kept, then the metadata saying so."""
        data = _read_span(self.generation / ROWS_FILE, 0, self._rows * self.space.row_bytes)
        sums = np.array(row_checksums(data, self.space.row_bytes, self._rows), SUM)
        (self.generation / SUMS_FILE).write_bytes(sums.tobytes())
        _write_meta(self.generation, self.space)

    def reuse(self, texts: dict[str, str]) -> list[str]:
        """Copy the vectors of the texts (key -> text) that the donor generation holds and
        that verify; returns the keys still to be embedded."""
        keys = list(texts)
        if self._donor is None:
            return keys
        self._donor.refresh()
        rows = self._donor.rows  # rows that verified only
        found = [key for key in keys if key in rows]
        vectors = np.asarray(self._donor.matrix[[rows[key] for key in found]])
        self.append(found, vectors, [texts[key] for key in found])
        return [key for key in keys if key not in rows]

    def append(self, keys: list[str], vectors: Vectors, texts: list[str]) -> None:
        if not keys:
            return
        rows_path = self.generation / ROWS_FILE
        held = rows_path.stat().st_size if rows_path.exists() else 0
        if held != self._rows * self.space.row_bytes:
            # changed under the writer (cut, or grown): appending would misalign every row
            raise VectorsDamaged(self.generation, f"{ROWS_FILE} changed size under its writer")
        data = np.ascontiguousarray(vectors, "<f4").tobytes()
        sums = np.array(row_checksums(data, self.space.row_bytes, len(keys)), SUM)
        _append(rows_path, data)
        _append(self.generation / SUMS_FILE, sums.tobytes())
        lines = b"".join(orjson.dumps([k, t]) + b"\n" for k, t in zip(keys, texts, strict=True))
        _append(self.generation / TEXTS_FILE, lines)
        _append(self.generation / KEYS_FILE, "".join(k + "\n" for k in keys).encode("ascii"))
        self.keys.update((key, self._rows + at) for at, key in enumerate(keys))
        self._rows += len(keys)

    def append_pooled(self, pooled: dict[str, Pooled]) -> None:
        """Store each pooled vector (key -> what it pools) whose parts are all stored: the mean
        of theirs (`engine.embedding.pooled`). One whose parts could not be embedded (no model)
        is left out, as those parts are: `knowhow reindex` embeds them once the model loads."""
        ready = {k: p for k, p in pooled.items() if all(part in self.keys for part in p.parts)}
        if not ready:
            return
        parts = list(dict.fromkeys(part for p in ready.values() for part in p.parts))
        rows = dict(zip(parts, self.stored(parts), strict=True))
        vectors = np.array(
            [mean_vector(np.array([rows[k] for k in p.parts])) for p in ready.values()]
        )
        self.append(list(ready), vectors, [p.text for p in ready.values()])

    def stored(self, keys: list[str]) -> Vectors:
        """The stored vectors of `keys`, each checked against its checksum (a pooled vector is
        never made of a damaged row: `VectorsDamaged`, and the generation is rebuilt)."""
        matrix = np.zeros((len(keys), self.space.dimension), np.float32)
        size = self.space.row_bytes
        with (
            (self.generation / ROWS_FILE).open("rb") as rows,
            (self.generation / SUMS_FILE).open("rb") as sums,
        ):
            for at, key in enumerate(keys):
                row = self.keys[key]
                rows.seek(row * size)
                data = rows.read(size)
                sums.seek(row * 4)
                if len(data) != size or zlib.crc32(data).to_bytes(4, "little") != sums.read(4):
                    raise VectorsDamaged(
                        self.generation, f"row {row} of {ROWS_FILE} fails its checksum"
                    )
                matrix[at] = np.frombuffer(data, "<f4")
        return matrix


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
    """A generation's vectors for search: the key table and the rows, read into memory as they
    verify, reloaded when the writer appended (one stat per call: only new rows are read).
    `damage` says why the store cannot be searched (its metadata unreadable, rows missing or
    failing their checksums); `rows` then maps only the keys whose rows verified."""

    def __init__(self, generation: Path) -> None:
        self.generation = generation
        self.damage: str | None = None
        self.meta: StoreMeta | None = None
        try:
            self.meta = read_meta(generation)
        except VectorsDamaged as exc:
            self.damage = exc.reason
        self.space = self.meta.space if self.meta else None
        self._size = -1
        self.rows: dict[str, int] = {}
        self.numbered = KeyNumbers([])
        self.keys: list[str] = []
        self.matrix: Vectors = np.zeros((0, self.space.dimension if self.space else 0), np.float32)

    def refresh(self) -> None:
        if self.meta is None or self.damage is not None:
            return
        try:
            size = (self.generation / KEYS_FILE).stat().st_size
        except FileNotFoundError:
            size = 0
        if size == self._size:
            return
        try:
            keys = read_keys(self.generation)
        except VectorsDamaged as exc:
            self.damage = exc.reason
            return
        start = len(self.keys)
        if len(keys) < start or keys[:start] != self.keys:
            start = 0  # not the store these rows came from: read it again
        added = read_rows(self.generation, self.meta, start, len(keys), keys)
        bad = set(added.bad)
        self.matrix = added.matrix if start == 0 else np.concatenate([self.matrix, added.matrix])
        if start == 0:
            self.rows = {}
        self.rows.update((keys[row], row) for row in range(start, len(keys)) if row not in bad)
        self.numbered = KeyNumbers(keys)
        self.keys = keys
        self._size = size
        self.damage = added.damage

    def texts(self) -> dict[str, str]:
        """What was embedded, by key (read on demand: search never needs it). A store written
        before texts were kept has none, and a line that cannot be read is left out: such keys
        are missing here."""
        try:
            data = (self.generation / TEXTS_FILE).read_bytes()
        except FileNotFoundError:
            return {}
        texts = {}
        for line in data[: data.rfind(b"\n") + 1].splitlines():
            try:
                key, text = orjson.loads(line)
            except (ValueError, TypeError):
                continue
            texts[str(key)] = str(text)
        return texts
