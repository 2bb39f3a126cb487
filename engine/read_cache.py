"""What `KnowledgeEngine` keeps from one read to the next, each for as long as what it was
made from holds, so that a read never sees what another commit or generation held.

A searcher shows one commit: what reads of it found (stored documents, the term dictionaries'
counts) is kept per searcher, and a reload starts afresh. The vectors are kept per generation,
the groups of near-identical texts per vector store, `relatedCount`s and `sourceSession`s per
generation and commit, the renamed testIds per generation and file, and the typo vocabulary
per generation, rebuilt after a commit at most once a minute (a large vocabulary takes seconds
to build). Each is rebuilt from the index when its source moves on, so keeping it changes no
answer (`scripts/bench_search_ab.py --check`).
"""

from collections.abc import Callable
from pathlib import Path
from typing import Generic, TypeVar

import tantivy

from engine.embedding import GroupCache, VectorReader
from engine.index import RENAMES_FILE, IndexReader, RenameMap, load_renames, rename_map
from engine.meaning import Related
from engine.query import SessionSources, StoredDocs, TermCounts, TypoVocabulary

V = TypeVar("V")


class Kept(Generic[V]):
    """One value, kept while what it was made from holds."""

    def __init__(self) -> None:
        self.value: V | None = None

    def get(self, holds: Callable[[V], bool], make: Callable[[], V]) -> V:
        """The kept value if `holds` says it still does, else a new one from `make`."""
        if self.value is None or not holds(self.value):
            self.value = make()
        return self.value


class ReadCache:
    """Everything an engine keeps between reads of its index, each value with its own rule."""

    def __init__(self) -> None:
        self._reads = Kept[tuple[StoredDocs, TermCounts]]()
        self._vectors = Kept[VectorReader]()
        self._groups = Kept[GroupCache]()
        self._related = Kept[Related]()
        self._sources = Kept[SessionSources]()
        self._renames = Kept[tuple[tuple[Path, int], RenameMap]]()
        self._typos: TypoVocabulary | None = None
        self._typos_key: tuple[Path, bytes] | None = None

    def reads(self, searcher: tantivy.Searcher) -> tuple[StoredDocs, TermCounts]:
        """The stored documents (`engine.query.doc_store_cache`) and term counts
        (`engine.query.term_counts`) `searcher` read so far."""
        return self._reads.get(
            lambda kept: kept[0].searcher is searcher,
            lambda: (StoredDocs(searcher), TermCounts(searcher)),
        )

    def typos(self, searcher: tantivy.Searcher, reader: IndexReader) -> TypoVocabulary:
        """The typo vocabulary, rebuilt after a rebuild swap, and after a commit at most once a
        minute: never while nothing changed."""
        key = (reader.path, reader.commit)
        moved = self._typos_key is not None and self._typos_key[0] != reader.path
        if self._typos is None or moved or (self._typos_key != key and self._typos.stale):
            self._typos = TypoVocabulary(searcher)
            self._typos_key = key
        return self._typos

    def vectors(self, generation: Path) -> VectorReader:
        """The vectors stored beside `generation`."""
        return self._vectors.get(
            lambda vectors: vectors.generation == generation, lambda: VectorReader(generation)
        )

    @property
    def last_vectors(self) -> VectorReader | None:
        """The vectors last asked for (None before any)."""
        return self._vectors.value

    def groups(self, vectors: VectorReader) -> GroupCache:
        """The groups of near-identical texts of this vector store."""
        return self._groups.get(
            lambda groups: groups.vectors is vectors, lambda: GroupCache(vectors)
        )

    def related(self, groups: GroupCache | str, commit: bytes) -> Related:
        """Counts behind `relatedCount`, per generation (its groups) and commit."""
        return self._related.get(
            lambda related: related.groups is groups and related.commit == commit,
            lambda: Related(groups, commit),
        )

    def sources(self, reader: IndexReader) -> SessionSources:
        """`sourceSession`s read so far, per generation and commit."""
        commit = (reader.path, reader.commit)
        return self._sources.get(
            lambda sources: sources.commit == commit, lambda: SessionSources(commit)
        )

    def renames(self, generation: Path) -> RenameMap:
        """The generation's renamed testIds (`engine.index.renamed_ids`), read again when the
        writer rewrote them (one stat a search; none: the generation has no such file)."""
        try:
            stamp = (generation, (generation / RENAMES_FILE).stat().st_mtime_ns)
        except OSError:
            return {}
        return self._renames.get(
            lambda kept: kept[0] == stamp,
            lambda: (stamp, rename_map(load_renames(generation) or [])),
        )[1]
