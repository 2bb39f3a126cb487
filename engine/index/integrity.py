"""Is a generation of the index whole? Checked when it is opened and after an error.

Files are the truth and the index a cache, so a damaged index is never repaired: it is
reported (`IndexDamaged`, code `MM_INDEX_UNAVAILABLE`) and rebuilt from the files by the writer.
Searching a damaged Tantivy segment can hang for tens of seconds and then panic
(`pyo3_runtime.PanicException`, a `BaseException`), so damage must be found before a search
touches it, not by one.

What is checked: every segment listed in `meta.json` has all its files, each file's Tantivy
footer is present and its CRC-32 matches the body (Tantivy appends `{"version": …, "crc": N}`,
the footer's length and the magic number 1337 to every file it writes), `knowhow.json` parses,
the manifest database passes SQLite's `quick_check`, and Tantivy opens the generation; for
a writer (`vectors=True`), also the vector store (`engine.embedding.StoreCheck`: its damage is
`VectorsDamaged`, which readers never raise: they answer by keywords meanwhile).

Tantivy never rewrites a segment file, so a file seen whole once with the same size and
modification time is whole still: `GenerationCheck` remembers those and re-reads only new or
changed files, which makes the writer's periodic check a few `stat` calls (and the manifest's
header).
"""

import contextlib
import sqlite3
import struct
import zlib
from pathlib import Path

import orjson
import tantivy

from engine.core import IndexDamaged, atomic_write
from engine.embedding import StoreCheck
from engine.index.read_only import read_manifest_connection, tantivy_folder

TANTIVY_META = "meta.json"
KNOWHOW_META = "knowhow.json"
MANIFEST = "manifest.sqlite3"
DAMAGE_FILE = "damaged.json"
"""Written into a generation by whichever process found it damaged: readers stop searching it
and the writer (maybe another process) verifies it and rebuilds."""
SEGMENT_PARTS = (".idx", ".pos", ".term", ".store", ".fast", ".fieldnorm")
FOOTER_MAGIC = 1337
FOOTER_TAIL = struct.Struct("<II")
FOOTER_MAX_LEN = 50_000
CHUNK_BYTES = 1 << 20
SQLITE_HEADER = b"SQLite format 3\x00"

Fingerprint = tuple[int, int]
"""A file's size and modification time (ns)."""
MetaFingerprints = tuple[tuple[int, int, int], ...]
"""`knowhow.json`'s and `meta.json`'s inode, size and modification time (ns): Tantivy replaces
`meta.json` by a rename at every commit, so each commit gives it another inode."""


def is_panic(exc: BaseException) -> bool:
    """Whether `exc` is a Rust panic surfaced by the Tantivy bindings (pyo3's PanicException
    derives from BaseException and cannot be imported by name)."""
    return type(exc).__name__ == "PanicException"


class GenerationCheck:
    """Verifies one generation, remembering the segment files already found whole."""

    def __init__(self, path: Path, *, vectors: bool = False) -> None:
        """`vectors`: check the vector store too (a writer's check)."""
        self.path = path
        self._whole: dict[str, Fingerprint] = {}
        self._metas: tuple[MetaFingerprints, list[str]] | None = None
        """The meta files as last found whole, and the segment files `meta.json` lists."""
        self._vectors = StoreCheck(path) if vectors else None

    def verify(self, *, full: bool = False) -> None:
        """Raise `IndexDamaged` naming the first damage found. `full` (on open, after an
        error) re-reads every file and checks the manifest and that Tantivy opens it all;
        otherwise only segment files new or changed since they were last found whole are read.

        A segment merged away by a writer in another process between reading `meta.json` and
        reading its files is not damage: the check is retried once on the newer meta."""
        try:
            self._verify(full)
        except IndexDamaged:
            self._verify(full)

    def _verify(self, full: bool) -> None:
        if full:
            self._whole.clear()
            self._metas = None
        for name in self._segment_files():
            self._check_file(name)
        if full:
            _check_manifest(self.path / MANIFEST)
            _check_opens(self.path)
        else:
            _check_manifest_header(self.path / MANIFEST)
        if self._vectors is not None:
            self._vectors.verify(full=full)

    def _segment_files(self) -> list[str]:
        """`segment_files`, after `knowhow.json` is checked; both meta files are read again
        only when one changed since they were last found whole (a search checks the
        generation each time: two stats instead of reading and parsing both)."""
        fingerprints = _meta_fingerprints(self.path)
        if self._metas is not None and self._metas[0] == fingerprints:
            return self._metas[1]
        _check_knowhow_meta(self.path)
        names = segment_files(self.path)
        if fingerprints is not None:  # stat before reading: a change meanwhile is read next time
            self._metas = (fingerprints, names)
        return names

    def _check_file(self, name: str) -> None:
        path = self.path / name
        try:
            stat = path.stat()
        except FileNotFoundError:
            raise IndexDamaged(self.path, f"segment file {name} is missing") from None
        fingerprint = (stat.st_size, stat.st_mtime_ns)
        if self._whole.get(name) == fingerprint:
            return
        problem = footer_problem(path)
        if problem:
            raise IndexDamaged(self.path, f"segment file {name}: {problem}")
        self._whole[name] = fingerprint


def _meta_fingerprints(generation: Path) -> MetaFingerprints | None:
    """None when a meta file is missing (reading it then says so)."""
    try:
        stats = [(generation / name).stat() for name in (KNOWHOW_META, TANTIVY_META)]
    except FileNotFoundError:
        return None
    return tuple((stat.st_ino, stat.st_size, stat.st_mtime_ns) for stat in stats)


def segment_files(generation: Path) -> list[str]:
    """The files every segment listed in `meta.json` must have (deletes included)."""
    try:
        meta = orjson.loads((generation / TANTIVY_META).read_bytes())
        names = []
        for segment in meta["segments"]:
            stem = str(segment["segment_id"]).replace("-", "")
            names += [stem + part for part in SEGMENT_PARTS]
            deletes = segment.get("deletes")
            if deletes:
                names.append(f"{stem}.{int(deletes['opstamp'])}.del")
    except FileNotFoundError:
        raise IndexDamaged(generation, f"{TANTIVY_META} is missing") from None
    except (ValueError, TypeError, KeyError) as exc:
        raise IndexDamaged(generation, f"{TANTIVY_META} is unreadable ({exc})") from None
    return names


def footer_problem(path: Path) -> str | None:
    """What is wrong with a Tantivy file's footer or checksum (None when it is whole)."""
    with path.open("rb") as handle:
        size = handle.seek(0, 2)
        if size < FOOTER_TAIL.size:
            return "shorter than its footer"
        handle.seek(size - FOOTER_TAIL.size)
        footer_len, magic = FOOTER_TAIL.unpack(handle.read(FOOTER_TAIL.size))
        body_len = size - FOOTER_TAIL.size - footer_len
        if magic != FOOTER_MAGIC or footer_len > FOOTER_MAX_LEN or body_len < 0:
            return "its footer is damaged"
        handle.seek(body_len)
        try:
            expected = orjson.loads(handle.read(footer_len))["crc"]
        except (ValueError, TypeError, KeyError):
            return "its footer is damaged"
        handle.seek(0)
        crc, left = 0, body_len
        while left > 0:
            chunk = handle.read(min(CHUNK_BYTES, left))
            if not chunk:
                return "shorter than its footer says"
            crc = zlib.crc32(chunk, crc)
            left -= len(chunk)
    return None if crc == expected else "checksum mismatch"


def _check_knowhow_meta(generation: Path) -> None:
    try:
        meta = orjson.loads((generation / KNOWHOW_META).read_bytes())
    except FileNotFoundError:
        raise IndexDamaged(generation, f"{KNOWHOW_META} is missing") from None
    except ValueError:
        raise IndexDamaged(generation, f"{KNOWHOW_META} is not JSON") from None
    if not isinstance(meta, dict):
        raise IndexDamaged(generation, f"{KNOWHOW_META} is not a JSON object")


def _check_manifest_header(path: Path) -> None:
    """The cheap part of the manifest check: is it (still) an SQLite database at all? The
    writer's open connection may not notice a file overwritten under it."""
    try:
        with path.open("rb") as handle:
            header = handle.read(len(SQLITE_HEADER))
    except FileNotFoundError:
        raise IndexDamaged(path.parent, f"{MANIFEST} is missing") from None
    if header != SQLITE_HEADER:
        raise IndexDamaged(path.parent, f"{MANIFEST} is not an SQLite database")


def _check_manifest(path: Path) -> None:
    try:
        conn = read_manifest_connection(path)
    except sqlite3.Error as exc:
        raise IndexDamaged(path.parent, f"{MANIFEST} cannot be opened ({exc})") from None
    try:
        verdict = conn.execute("PRAGMA quick_check").fetchone()
        conn.execute("SELECT count(*) FROM sessions").fetchone()
        conn.execute("SELECT count(*) FROM facts").fetchone()
    except sqlite3.Error as exc:
        raise IndexDamaged(path.parent, f"{MANIFEST} is damaged ({exc})") from None
    finally:
        conn.close()
    if verdict != ("ok",):
        raise IndexDamaged(path.parent, f"{MANIFEST} is damaged ({verdict})")


def _check_opens(generation: Path) -> None:
    try:
        index = tantivy.Index.open(str(tantivy_folder(generation)))
        # manual reloads: no watcher thread left behind that re-creates lock files in a
        # generation being deleted
        index.config_reader(reload_policy="manual", num_warmers=0)
        index.searcher().num_docs  # noqa: B018 - opening every segment is the check
    except BaseException as exc:
        if not (is_panic(exc) or isinstance(exc, ValueError)):
            raise
        raise IndexDamaged(generation, f"Tantivy cannot open it ({exc})") from None


# -- damage reports shared between processes -----------------------------------------------
def report_damage(generation: Path, reason: str) -> None:
    """Mark a generation damaged, so every process stops searching it and the writer rebuilds."""
    with contextlib.suppress(OSError):  # a read-only index dir: the writer finds it itself
        atomic_write(generation / DAMAGE_FILE, orjson.dumps({"reason": reason}))


def reported_damage(generation: Path) -> str | None:
    """The reason a generation was reported damaged, or None."""
    try:
        data = orjson.loads((generation / DAMAGE_FILE).read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return "reported damaged"
    reason = data.get("reason") if isinstance(data, dict) else None
    return str(reason) if reason else "reported damaged"


def clear_damage(generation: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (generation / DAMAGE_FILE).unlink()
