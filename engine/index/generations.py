"""The on-disk index: generations, schema-version check, reader and the single writer.

Layout of the index directory (default `index-data/`):

    CURRENT            name of the live generation, replaced atomically on a rebuild
    gen-0001/          a Tantivy index + `knowhow.json` (schema version, params)
                       + `manifest.sqlite3` (per session: signature of the files indexed)

A rebuild writes a new generation and swaps `CURRENT`, so searches keep answering meanwhile.
Tantivy allows one writer per directory; a second one gets `IndexUnavailable`. Readers and
writers hold the generation they use, and rebuilds take turns (`generation_locks`): old
generations are removed once nobody uses them.
"""

import base64
import contextlib
import hashlib
import sqlite3
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from importlib.metadata import version
from pathlib import Path
from typing import Any

import orjson
import tantivy

from engine.core import IndexUnavailable, StaleIndex, atomic_write
from engine.embedding import (
    DIMENSION,
    MODEL_ID,
    ModelUnavailable,
    Pooled,
    VectorSpace,
    VectorWriter,
    embedder_for,
    read_space,
)
from engine.index.awaiting_vectors import Awaiting, read_awaiting, write_awaiting
from engine.index.clauses import all_of, count, term
from engine.index.doc_store_pages import StoreMappings, store_files
from engine.index.generation_locks import BuildLock, GenerationHold, remove_unheld
from engine.index.integrity import TANTIVY_META
from engine.index.read_only import tantivy_folder
from engine.index.schema import DOC_STEP, SCHEMA_VERSION, build_schema
from engine.index.step_texts import EMBED_TEXTS, POOLED_TEXTS

CURRENT_FILE = "CURRENT"
META_FILE = "knowhow.json"
MANIFEST_FILE = "manifest.sqlite3"
WRITER_HEAP_BYTES = 256_000_000
VECTOR_SPACE = VectorSpace(MODEL_ID, DIMENSION)
"""The space this knowhow embeds texts into."""
WRITER_THREADS = 1
"""One indexing thread: Python analysis keeps the other core busy (faster on 2 cores:
`scripts/bench_build.py`)."""
HOLD_ATTEMPTS = 3
"""Times `held_current` reads `CURRENT` again when the generation it named was replaced before
it could be held."""


@dataclass(slots=True)
class EncodedDocuments:
    """Documents as the writer adds them: each one Tantivy's JSON form of the document dict
    (bytes fields in base64, as Tantivy reads them), plus the texts they refer to by key, to be
    embedded and the vectors to pool from them (`EMBED_TEXTS`, `POOLED_TEXTS`, taken out of the
    dicts).

    Encoding happens where the documents are made, so a bulk build does it in its analysis
    workers: a JSON string crosses the process boundary for the cost of copying it, and
    Tantivy parses it in Rust, while a dict is unpickled and converted field by field in the
    writer, whose CPU bounds a build (the segment files are byte-identical either way;
    `scripts/bench_build.py` shows the writer's share)."""

    json: list[str] = field(default_factory=list)
    texts: dict[str, str] = field(default_factory=dict)
    pooled: dict[str, Pooled] = field(default_factory=dict)
    """Vectors to pool from the vectors of `texts` (`POOLED_TEXTS`), by key."""
    step_ids: list[str] = field(default_factory=list)
    """Each document's step id ("" for a session document), in `json`'s order: a rebuild
    replaces the documents of steps whose supersede flag changed
    (`engine.index.indexer.rebuild`)."""


def encode_documents(documents: Iterable[dict[str, Any]]) -> EncodedDocuments:
    """`documents` as the writer adds them (their `EMBED_TEXTS` and `POOLED_TEXTS` entries are
    taken out)."""
    encoded = EncodedDocuments()
    for doc in documents:
        encoded.texts.update(doc.pop(EMBED_TEXTS, {}))
        encoded.pooled.update(doc.pop(POOLED_TEXTS, {}))
        encoded.json.append(orjson.dumps(doc, default=_base64).decode())
        encoded.step_ids.append(doc.get("step_id", ""))
    return encoded


def _base64(value: object) -> str:
    """orjson's fallback for the values it cannot write: bytes fields, as Tantivy reads them."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii")
    raise TypeError(f"{type(value).__name__} is not a document value")


class GenerationReplaced(IndexUnavailable):
    """The generation about to be opened is gone: a rebuild replaced it meanwhile."""


class IndexLayout:
    """Generations of the index under one base directory."""

    def __init__(self, base: Path) -> None:
        self.base = Path(base)

    def current(self) -> Path | None:
        """The live generation; None when there is none (`IndexUnavailable` when the pointer
        cannot be read: a folder in its place, no file descriptor left)."""
        try:
            name = (self.base / CURRENT_FILE).read_text().strip()
        except (FileNotFoundError, NotADirectoryError):  # no index (yet) at this path
            return None
        except (OSError, UnicodeDecodeError) as exc:
            raise IndexUnavailable(f"cannot read {self.base / CURRENT_FILE}: {exc}") from exc
        path = self.base / name
        return path if name and path.is_dir() else None

    def held_current(self) -> tuple[Path, GenerationHold] | None:
        """The live generation, held (`hold`); None when there is none. One replaced between
        reading `CURRENT` and holding it is passed over for the one live by then."""
        for _ in range(HOLD_ATTEMPTS):
            current = self.current()
            if current is None:
                return None
            held = GenerationHold.take(current)
            if held is not None:
                return current, held
        raise GenerationReplaced(f"the index at {self.base} was replaced while opening it; retry")

    def stamp(self) -> int | None:
        """The pointer file's modification time (ns): changes whenever a generation is published."""
        try:
            return (self.base / CURRENT_FILE).stat().st_mtime_ns
        except FileNotFoundError:
            return None

    def generations(self) -> list[Path]:
        return [p for p in self.base.glob("gen-*") if p.is_dir()]

    def new_generation(self) -> Path:
        """A new, empty generation folder (call with the build lock held: `rebuild`)."""
        self.base.mkdir(parents=True, exist_ok=True)
        numbers = [
            int(p.name.split("-", 1)[1])
            for p in self.base.glob("gen-*")
            if p.name.split("-", 1)[1].isdigit()
        ]
        path = self.base / f"gen-{max(numbers, default=0) + 1:04d}"
        path.mkdir()
        return path

    def publish(self, generation: Path) -> None:
        """Make `generation` live, then remove the other generations nobody uses (call with
        the build lock held: `rebuild`); one still in use stays until a later `sweep`."""
        atomic_write(self.base / CURRENT_FILE, generation.name.encode())
        remove_unheld([g for g in self.generations() if g != generation])

    def sweep(self) -> None:
        """Remove the generations nobody uses but the live one (replaced ones whose last user
        moved on, or a killed rebuild's), unless a rebuild is running: it will."""
        with BuildLock(self.base).held_if_free() as free:
            live = self.current()
            if free and live is not None:
                remove_unheld([g for g in self.generations() if g != live])


def _write_meta(path: Path, root: Path) -> None:
    meta = {"schemaVersion": SCHEMA_VERSION, "engine": "knowhow", "tantivy": version("tantivy")}
    meta["root"] = str(root.absolute())
    atomic_write(path / META_FILE, orjson.dumps(meta))


def built_from(base: Path) -> Path | None:
    """The knowledge root the live generation under `base` was built from; None when there is
    none, or it was built before the root was recorded, or its meta file cannot be read now."""
    generation = IndexLayout(base).current()
    try:
        meta = orjson.loads((generation / META_FILE).read_bytes()) if generation else None
    except (OSError, ValueError):
        return None
    root = meta.get("root") if isinstance(meta, dict) else None
    return Path(root) if isinstance(root, str) else None


def other_root(base: Path, root: Path) -> Path | None:
    """The root the index under `base` holds, when it is not `root` (the same folder reached
    by another path is the same root); None when it is, or cannot be told."""
    held = built_from(base)
    if held is None or held.resolve() == root.resolve():
        return None
    return held


def _check_meta(path: Path) -> None:
    try:
        meta = orjson.loads((path / META_FILE).read_bytes())
    except (OSError, ValueError) as exc:
        raise StaleIndex(
            f"index at {path} has no readable {META_FILE}; run `knowhow reindex`"
        ) from exc
    if meta.get("schemaVersion") != SCHEMA_VERSION:
        raise StaleIndex(
            f"index at {path} has schema version {meta.get('schemaVersion')}, this knowhow needs "
            f"{SCHEMA_VERSION}; run `knowhow reindex` (or scripts/reindex) to rebuild it"
        )


def embedded_by_other_model(path: Path) -> str | None:
    """Why a generation's vectors cannot be extended by this knowhow: they are of another
    model (or model execution) than `VECTOR_SPACE`; None when they are of this one, or none
    are stored yet.

    Its documents refer to their texts by keys of that model, which a writer of this one
    never fills in: writing to it would leave every older document out of semantic search,
    silently. So a writer treats it as stale and rebuilds (every text embedded again); a
    reader only degrades to keywords, saying so (`KnowledgeBase._vector_store`)."""
    space = read_space(path)
    return None if space is None else other_space(space, path)


def other_space(space: VectorSpace, path: Path) -> str | None:
    """Why vectors of `space` stored at `path` cannot be searched or extended by this knowhow
    (None: they are of `VECTOR_SPACE`), said the same way to a writer and a reader."""
    if space == VECTOR_SPACE:
        return None
    return (
        f"index at {path} holds vectors of {space.model_id}, this knowhow embeds with "
        f"{MODEL_ID}; run `knowhow reindex` (or scripts/reindex) to embed them again"
    )


DOCSTORE_BLOCK_BYTES = 4096
"""Stored documents are compressed in blocks of this size (Tantivy's default: 16 KB). Reading
one document decompresses its whole block, and a search reads tens it has not read before
(its rerank window's and its page's): smaller blocks decompress less per document, so a search
costs less CPU, for a larger doc store (compression sees less at a time); smaller still was no
faster (paired on two indexes of the same steps: `scripts/bench_search_ab.py`)."""


def create_generation(layout: IndexLayout, root: Path) -> Path:
    """A new, empty generation of the files under `root`, with its meta file (not live until
    published)."""
    path = layout.new_generation()
    tantivy.Index(build_schema(), str(path), reuse=False)
    _set_docstore_blocks(path, DOCSTORE_BLOCK_BYTES)
    _write_meta(path, root)
    Manifest(path).close()
    return path


def _set_docstore_blocks(path: Path, block_bytes: int) -> None:
    """Set the doc-store block size of a new, empty index. tantivy-py does not expose Tantivy's
    index settings; they live in `meta.json`, which every writer of the index reads when it
    opens it and writes back with each commit, so the setting holds for every segment written
    or merged in this generation."""
    meta_file = path / TANTIVY_META
    meta = orjson.loads(meta_file.read_bytes())
    meta["index_settings"]["docstore_blocksize"] = block_bytes
    atomic_write(meta_file, orjson.dumps(meta))


@dataclass(frozen=True, slots=True)
class _Held:
    """A searcher and the mappings of its segments' doc stores (none when not known for sure)."""

    searcher: tantivy.Searcher
    store: StoreMappings


def hold(generation: Path) -> GenerationHold:
    """Hold `generation` while using it, so that no publish removes it meanwhile."""
    held = GenerationHold.take(generation)
    if held is None:
        raise GenerationReplaced(
            f"the index generation {generation} was replaced by a newer one; retry"
        )
    return held


class IndexReader:
    """Read access to the live generation; cheap to reload after another process commits.
    Holds its generation (`held`, taken here unless given) as long as it is in use."""

    def __init__(self, path: Path, held: GenerationHold | None = None) -> None:
        self.held = held or hold(path)
        with self.held.released_on_error():
            _check_meta(path)
            self.path = path
            self.schema = build_schema()
            meta = _tantivy_meta(path)
            self.commit = commit_digest(meta)
            try:
                self.index = tantivy.Index.open(str(tantivy_folder(path)))
            except ValueError as exc:
                raise IndexUnavailable(f"cannot open index at {path}: {exc}") from exc
            self.index.config_reader(reload_policy="manual", num_warmers=0)
            self._held = self._hold(meta)

    @classmethod
    def open(cls, layout: IndexLayout) -> "IndexReader":
        path = layout.current()
        if path is None:
            raise IndexUnavailable(f"no index at {layout.base}; run `knowhow index` to build it")
        return cls(path)

    def searcher(self) -> tantivy.Searcher:
        return self._held.searcher

    def reload(self) -> None:
        meta = _tantivy_meta(self.path)
        self.commit = commit_digest(meta)  # read before: the searcher is at least this commit
        self.index.reload()
        self._held = self._hold(meta, self._held.store)

    def release_store_pages(self) -> int:
        """Unmap the doc-store pages searches read so far (`engine.index.doc_store_pages`); the
        bytes of address range released."""
        held = self._held  # its searcher keeps the mappings alive until this returns
        return held.store.release()

    def _hold(self, meta: bytes, previous: StoreMappings | None = None) -> _Held:
        """The loaded searcher with its segments' doc-store files, known when Tantivy's
        `meta.json` read before loading is still the one on disk after: then it is the one
        the searcher was loaded from (a commit meanwhile leaves them unknown until the next
        reload, and nothing is unmapped). `previous`: the mappings of the searcher held while
        this one was loaded."""
        searcher = self.index.searcher()
        segments: list[str] = []
        if meta and _tantivy_meta(self.path) == meta:
            with contextlib.suppress(ValueError, KeyError, TypeError):
                segments = [str(s["segment_id"]) for s in orjson.loads(meta)["segments"]]
        files = store_files(self.path, segments)
        return _Held(searcher, StoreMappings(files, previous))


def _tantivy_meta(generation: Path) -> bytes:
    """Tantivy's `meta.json` (its segments and the commit's opstamp); empty if unreadable."""
    try:
        return (generation / TANTIVY_META).read_bytes()
    except OSError:
        return b""


def commit_digest(meta: bytes) -> bytes:
    """Which commit of a generation is on disk: a digest of Tantivy's `meta.json`, whose
    opstamp every commit changes (`IndexReader.commit`, what the search cache is keyed by).
    Read before the searcher is (re)loaded, so the searcher shows this commit or a later one."""
    return hashlib.blake2b(meta, digest_size=16).digest() if meta else b""


class Manifest:
    """What the index holds, per session: a signature of the files it was built from.

    Committed after the Tantivy commit: after a crash in between, the next sync simply
    re-indexes those sessions (re-indexing is idempotent).
    """

    def __init__(self, generation: Path) -> None:
        self.conn = sqlite3.connect(generation / MANIFEST_FILE)
        self.conn.execute("PRAGMA journal_mode=WAL")  # readers (status) never block the writer
        self.conn.execute("PRAGMA synchronous=NORMAL")  # the manifest can always be rebuilt
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS sessions (session_id TEXT PRIMARY KEY, signature TEXT)"
        )
        self.conn.execute(
            "CREATE TABLE IF NOT EXISTS facts (session_id TEXT PRIMARY KEY, data BLOB)"
        )

    def signatures(self) -> dict[str, str]:
        return dict(self.conn.execute("SELECT session_id, signature FROM sessions").fetchall())

    def facts(self) -> dict[str, bytes]:
        """Every session's supersede facts (`engine.records.supersede.SessionFacts`, encoded)."""
        return dict(self.conn.execute("SELECT session_id, data FROM facts").fetchall())

    def session(self, session_id: str) -> tuple[str, bytes] | None:
        """One session's signature and supersede facts (None when it is not indexed)."""
        row = self.conn.execute(
            "SELECT s.signature, f.data FROM sessions s JOIN facts f USING (session_id) "
            "WHERE s.session_id = ?",
            (session_id,),
        ).fetchone()
        return (str(row[0]), bytes(row[1])) if row else None

    def apply(
        self, upserts: dict[str, str], deletes: Iterable[str], facts: dict[str, bytes]
    ) -> None:
        gone = [(s,) for s in deletes]
        with self.conn:
            self.conn.executemany(
                "INSERT OR REPLACE INTO sessions VALUES (?, ?)", list(upserts.items())
            )
            self.conn.executemany("DELETE FROM sessions WHERE session_id = ?", gone)
            self.conn.executemany("INSERT OR REPLACE INTO facts VALUES (?, ?)", list(facts.items()))
            self.conn.executemany("DELETE FROM facts WHERE session_id = ?", gone)

    def close(self) -> None:
        self.conn.close()


class IndexWriter:
    """The one writer of a generation. Not thread-safe: call it from one thread."""

    def __init__(
        self, path: Path, *, threads: int = WRITER_THREADS, reuse_vectors: Path | None = None
    ) -> None:
        """`reuse_vectors`: a generation whose stored vectors are copied rather than embedded
        again (a rebuild passes the generation it replaces)."""
        self.held = hold(path)
        with self.held.released_on_error():
            _check_meta(path)
            other_model = embedded_by_other_model(path)
            if other_model is not None:
                raise StaleIndex(other_model)
            self.path = path
            self.index = tantivy.Index.open(str(path))
            # reloaded when asked (`indexed_steps`): the reader tantivy-py opens reloads on a
            # thread of its own after every commit it notices, until the index is dropped
            self.index.config_reader(reload_policy="manual", num_warmers=0)
            try:
                self.writer = self.index.writer(heap_size=WRITER_HEAP_BYTES, num_threads=threads)
            except ValueError as exc:
                raise IndexUnavailable(
                    f"another process is writing the index at {path}; it indexes for everyone"
                ) from exc
            self.manifest = Manifest(path)
            self.vectors = VectorWriter(path, VECTOR_SPACE, reuse_vectors)
        self._pending_texts: dict[str, str] = {}
        self._pending_pooled: dict[str, Pooled] = {}
        self.embedding_error: str | None = None
        """Why the last commit could not embed its new texts (keyword search still sees them)."""
        self._pending_upserts: dict[str, str] = {}
        self._pending_deletes: set[str] = set()
        self._pending_facts: dict[str, bytes] = {}

    def replace_session(
        self, session_id: str, documents: EncodedDocuments, signature: str, facts: bytes
    ) -> None:
        """Delete everything of the session, then add its documents (one commit later)."""
        self.writer.delete_documents_by_term("session_id", session_id)
        self.add_encoded(session_id, documents, signature, facts)

    def add_documents(
        self, session_id: str, documents: list[dict[str, Any]], signature: str, facts: bytes
    ) -> None:
        """Add documents of a session (e.g. its newly appended steps), its new signature and
        its supersede facts as they are now (the whole session's)."""
        self.add_encoded(session_id, encode_documents(documents), signature, facts)

    def add_encoded(
        self, session_id: str, documents: EncodedDocuments, signature: str, facts: bytes
    ) -> None:
        """`add_documents` of documents already encoded (by an analysis worker)."""
        self._pending_texts.update(
            (key, text) for key, text in documents.texts.items() if key not in self.vectors.keys
        )
        self._pending_pooled.update(
            (key, pool) for key, pool in documents.pooled.items() if key not in self.vectors.keys
        )
        for doc in documents.json:
            self.writer.add_json(doc)
        self._pending_upserts[session_id] = signature
        self._pending_facts[session_id] = facts
        self._pending_deletes.discard(session_id)

    def delete_session(self, session_id: str) -> None:
        self.writer.delete_documents_by_term("session_id", session_id)
        self._pending_deletes.add(session_id)
        self._pending_upserts.pop(session_id, None)
        self._pending_facts.pop(session_id, None)

    def indexed_steps(self, session_id: str) -> int:
        """How many step documents of the session the last commit holds."""
        self.index.reload()
        schema = self.index.schema
        query = all_of(term(schema, "doc_type", DOC_STEP), term(schema, "session_id", session_id))
        return count(self.index.searcher(), query)

    def delete_step(self, step_id: str) -> None:
        self.writer.delete_documents_by_term("step_id", step_id)

    def commit(self, progress: Callable[[], None] | None = None) -> None:
        """Embed the batch's new texts (their vectors are stored before the documents that
        refer to them become visible), then commit documents and manifest. `progress` is
        called as embedding goes on (the live writer's lease heartbeat)."""
        self._embed_pending(progress)
        self.writer.commit()
        self.manifest.apply(self._pending_upserts, self._pending_deletes, self._pending_facts)
        self._pending_upserts.clear()
        self._pending_deletes.clear()
        self._pending_facts.clear()

    def _embed_pending(self, progress: Callable[[], None] | None = None) -> None:
        """Vectors for the batch's new texts and those earlier commits could not embed
        (`engine.index.awaiting_vectors`): copied when the generation this one replaces holds
        them, embedded otherwise; then those pooled from them (`engine.embedding.pooled`),
        copied likewise, else made of their parts' stored vectors. What cannot be embedded now
        (the model does not load) is kept awaiting, never dropped."""
        earlier = read_awaiting(self.path)
        texts = {**earlier.texts, **self._pending_texts}
        texts = {key: text for key, text in texts.items() if key not in self.vectors.keys}
        keys = self.vectors.reuse(texts)
        left: dict[str, str] = {}
        if keys:
            try:
                embedder = embedder_for(len(keys))
                vectors = embedder.embed([texts[k] for k in keys], progress)
            except ModelUnavailable as exc:
                self.embedding_error = str(exc)  # kept awaiting: a later commit embeds them
                left = {key: texts[key] for key in keys}
            else:
                self.vectors.append(keys, vectors, [texts[k] for k in keys])
                self.embedding_error = None
        wanted = {**earlier.pooled, **self._pending_pooled}
        wanted = {key: pool for key, pool in wanted.items() if key not in self.vectors.keys}
        pooled = self.vectors.reuse({key: pool.text for key, pool in wanted.items()})
        self.vectors.append_pooled({key: wanted[key] for key in pooled})
        unmade = {key: wanted[key] for key in pooled if key not in self.vectors.keys}
        if earlier or left or unmade:
            write_awaiting(self.path, Awaiting(left, unmade))
        self._pending_texts.clear()
        self._pending_pooled.clear()

    def awaits_vectors(self) -> bool:
        """Whether texts of this generation still wait for their vectors."""
        return bool(read_awaiting(self.path))

    def close(self) -> None:
        """Wait for Tantivy's segment merges, then let go of the index and release the writer
        lock and the generation: once this returns, no thread of this writer writes into the
        generation. (Dropping a Tantivy writer does not wait for the merges its commits
        started: they went on writing segment files into a generation that might be removed.)"""
        try:
            self.writer.wait_merging_threads()
        finally:
            self.manifest.close()
            del self.writer, self.index
            self.held.release()
