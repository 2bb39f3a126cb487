"""`KnowledgeEngine`: the library entry point the CLI and the MCP server call.

It owns what outlives one call — the reader of the live index generation (reopened when a
rebuild swaps it), what reads keep for the next ones on the same generation and commit
(`engine.read_cache`), the answers of recent searches, and when to release the doc-store pages
— and hands each operation a `ReadView`. The operations live in the layers below: search in
`engine.search`, last, sessions, summaries, timelines and priorKnowledge in `engine.history`,
duplicates and clusters in `engine.meaning`. Per-conversation state (the current session) is
the caller's: it is passed with each call that can use scope "current".
"""

import logging
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from analyzers import SynonymTable
from engine.core import (
    ClusterInput,
    ClusterList,
    DuplicateList,
    DuplicatesInput,
    IndexDamaged,
    IndexUnavailable,
    LastInput,
    NotFound,
    Scope,
    SearchInput,
    SearchPage,
    SessionList,
    SessionRecipe,
    SessionsInput,
    SessionSummary,
    StepInput,
    StepList,
    SummarizeInput,
    TimelineInput,
    session_dir,
)
from engine.embedding import (
    DIMENSION,
    MODEL_ID,
    Embedder,
    GroupCache,
    ModelUnavailable,
    VectorReader,
    load_embedder,
)
from engine.history import (
    Activity,
    PriorKnowledge,
    ScreenContext,
    StepContext,
    TimelineResult,
    count_activity,
    last_steps,
    newest_session_id,
    one_session,
    prior_knowledge,
    session_list,
    session_page,
    step_context,
    summarize,
    timeline,
)
from engine.index import (
    SEARCHES_PER_RELEASE,
    GenerationCheck,
    IndexLayout,
    IndexReader,
    PageRelease,
    RenamedId,
    all_of,
    count,
    is_panic,
    other_space,
    read_awaiting,
    report_damage,
    reported_damage,
    term,
)
from engine.live import document_counts
from engine.meaning import (
    QueryEmbedding,
    SemanticLeg,
    cluster,
    configured_embed_timeout,
    embeddable,
    find_duplicates,
    query_embedding,
)
from engine.query import (
    ReadView,
    scope_session,
    step_filter,
)
from engine.read_cache import ReadCache
from engine.records import KnowledgeStore
from engine.search import MAX_ENTRIES, SearchCache, cache_key, search

T = TypeVar("T")
log = logging.getLogger(__name__)


class KnowledgeEngine:
    """Search, list and summarize the knowledge under `root` through its index at `index_dir`."""

    def __init__(
        self,
        root: Path,
        index_dir: Path,
        *,
        synonyms: SynonymTable | None = None,
        now: Callable[[], datetime] | None = None,
        embed_timeout: float | None = None,
        cache_searches: bool = True,
    ) -> None:
        """`cache_searches`: keep recent answers for agents asking again
        (`engine.search.search_cache`); off, every search is computed, as a benchmark of repeated
        queries needs."""
        self.root = Path(root)
        self.layout = IndexLayout(index_dir)
        self.synonyms = synonyms or SynonymTable()
        self.now = now or (lambda: datetime.now(UTC))
        self._reader: IndexReader | None = None
        self._reader_stamp: int | None = None
        self._check: GenerationCheck | None = None
        self._kept = ReadCache()
        self.embed_timeout = (
            embed_timeout if embed_timeout is not None else configured_embed_timeout()
        )
        """Seconds a search waits for the query's embedding (default: `KNOWHOW_EMBED_TIMEOUT_MS`
        or 1 s, `engine.meaning.semantic_leg.configured_embed_timeout`)."""
        self._warned: str | None = None
        self._embedder: Embedder | None = None
        """The model the last search's semantic leg used (`_early_embedding`)."""
        self._last_degraded: dict[str, str] | None = None
        self._cache = SearchCache(size=MAX_ENTRIES if cache_searches else 0)
        self._pages = PageRelease()
        self._activity: tuple[tuple[Path, bytes], Activity | None] | None = None
        """The last activity counted, by the generation and commit it counts."""

    @property
    def reader(self) -> IndexReader:
        """The reader of the live generation, reopened when a rebuild swapped it (noticed by the
        pointer file's mtime: one stat per call, not a read). A generation is verified before
        it is first searched, and never searched once reported damaged (`IndexDamaged`).

        Damage after opening need not make Tantivy fail: random bytes in a posting list can
        just as well answer nonsense. Segment files are never rewritten, so each read stats
        them (cheap) and re-checksums any whose size or mtime changed since found whole."""
        stamp = self.layout.stamp()
        if self._reader is None or stamp != self._reader_stamp:
            current = self.layout.current()
            if self._reader is None or (current is not None and current != self._reader.path):
                self._reader, self._check = None, None
                self._reader = self._open()
            self._reader_stamp = stamp
        damage = reported_damage(self._reader.path)
        if damage is not None:
            raise IndexDamaged(self._reader.path, damage)
        if self._check is not None:
            _verify(self._check, full=False)
        return self._reader

    def _open(self) -> IndexReader:
        """A reader of the live generation, held from before it is verified: a generation a
        rebuild replaces meanwhile is never removed under it (its files missing would look like
        damage)."""
        live = self.layout.held_current()
        if live is None:
            return IndexReader.open(self.layout)  # says there is no index and what to do
        generation, held = live
        with held.released_on_error():
            damage = reported_damage(generation)
            if damage is not None:
                raise IndexDamaged(generation, damage)
            check = GenerationCheck(generation)
            _verify(check, full=True)
            reader = IndexReader(generation, held)
        self._check = check
        return reader

    def _guarded(self, action: Callable[[], T], *, searches: int = SEARCHES_PER_RELEASE) -> T:
        """Run a read of the index; a Tantivy failure (an error, or a Rust panic, which is a
        BaseException) makes the generation be verified: damage is reported to every process
        and answered with `IndexDamaged`, a panic on a whole index with `IndexUnavailable`.
        After a read worth `searches` searches, the doc-store pages mapped so far are unmapped
        when `PageRelease` says it is time (`engine.index.doc_store_pages`: they stay in the
        page cache, out of the searcher's resident memory)."""
        try:
            answer = action()
        except IndexUnavailable:
            raise
        except BaseException as exc:
            if not (is_panic(exc) or isinstance(exc, ValueError | OSError)):
                raise
            if self._reader is not None:
                _verify(GenerationCheck(self._reader.path), full=True)
            if is_panic(exc):
                raise IndexUnavailable(f"the index failed to answer ({exc}); retry") from None
            raise
        self._pages.count(searches)
        if self._reader is not None and self._pages.due():
            self._reader.release_store_pages()
            self._pages.released()
        return answer

    def refresh(self) -> None:
        """See commits made since the last call (by this or another process)."""
        self._guarded(lambda: self.reader.reload(), searches=0)

    def _view(
        self, current_session: str | None = None, reader: IndexReader | None = None
    ) -> ReadView:
        reader = reader or self.reader
        searcher = reader.searcher()
        docs, terms = self._kept.reads(searcher)
        return ReadView(searcher, reader.schema, self.now(), current_session, docs, terms)

    def semantic(self) -> SemanticLeg | str:
        """The semantic leg of the live generation, or why there is none (shown as `degraded`)."""
        return self._semantic(self.reader.path)

    def _vector_store(self, generation: Path) -> VectorReader | str:
        """The generation's vectors, or why there are none (damage found as they are read:
        the writer rebuilds the generation, embedding again what did not verify)."""
        vectors = self._kept.vectors(generation)
        vectors.refresh()
        if vectors.damage is not None:
            return (
                f"the vector store of {generation.name} is damaged ({vectors.damage}): answered "
                "by keywords until it is rebuilt (a running server's writer rebuilds it; "
                "without one, `knowhow index`)"
            )
        if vectors.space is None:
            return f"the index has no vectors of {MODEL_ID}; run `knowhow reindex`"
        return other_space(vectors.space, generation) or vectors

    def _semantic(self, generation: Path) -> SemanticLeg | str:
        vectors = self._vector_store(generation)
        if isinstance(vectors, str):
            return vectors
        try:
            return SemanticLeg(load_embedder(), vectors, self.embed_timeout)
        except ModelUnavailable as exc:
            return f"embedding model unavailable: {exc}"

    def _text_groups(self, generation: Path) -> GroupCache | str:
        """The generation's groups of near-identical texts (duplicates, clusters,
        relatedCount), or why there are none; needs the vectors, not the model."""
        vectors = self._vector_store(generation)
        if isinstance(vectors, str):
            return vectors
        return self._kept.groups(vectors)

    def semantic_status(self) -> dict[str, object]:
        """What `mm_knowledge_status` says of the semantic leg: model, vectors, why degraded."""
        leg = self.semantic()
        vectors = self._kept.last_vectors
        if vectors is not None:
            vectors.refresh()
        awaiting = len(read_awaiting(self.reader.path))
        degraded = leg if isinstance(leg, str) else None
        if degraded is None and awaiting:
            degraded = (
                f"{awaiting:,} texts of the index have no vectors yet (a writer could not load "
                "the embedding model): search finds them by keywords only until a writer that "
                "can embed them does, on its next commit or reconcile"
            )
        return {
            "model": MODEL_ID,
            "dimension": DIMENSION,
            "vectors": len(vectors.keys) if vectors is not None else 0,
            "awaitingVectors": awaiting,
            "modeUsed": "keyword" if isinstance(leg, str) else "hybrid",
            "degraded": degraded,
            "lastDegraded": self._last_degraded,
            "integerProducts": None
            if isinstance(leg, str)
            else ("uint8 x int8" if leg.embedder.signed_weights else "uint8 x uint8"),
        }

    def search(self, request: SearchInput, *, current_session: str | None = None) -> SearchPage:
        """A search; the same one on the same commit within 5 minutes is answered from the
        cache (`engine.search.search_cache`), but only once the generation passed its check."""

        def run() -> SearchPage:
            reader = self.reader  # verified once per search: damage raises before the cache
            key = cache_key(request, current_session, str(reader.path), reader.commit)
            cached = self._cache.get(key)
            if cached is not None:
                return cached
            view = self._view(current_session, reader)
            semantic: SemanticLeg | str = "keyword mode asked for"
            if request.mode != "keyword":
                semantic = self._semantic(reader.path)
            self._embedder = semantic.embedder if isinstance(semantic, SemanticLeg) else None
            typos = self._kept.typos(view.searcher, reader)
            related = self._kept.related(self._text_groups(reader.path), reader.commit)
            sources = self._kept.sources(reader)
            renamed = self._kept.renames(reader.path)
            page = search(
                view, request, self.synonyms, typos, semantic, related, sources, embedding, renamed
            )
            if page.degraded is None:
                self._cache.put(key, page)
            return page

        embedding = self._early_embedding(request)
        try:
            page = self._guarded(run, searches=1)
        except IndexDamaged:
            self._cache.clear()  # nothing computed before the damage was found is served
            raise
        finally:
            if embedding is not None:
                embedding.cancel()  # unused (a cached or keyword answer, a failure): not run
        if page.degraded:
            # Never silently: the answer says `degraded`, status says the last one, and stderr
            # once per reason.
            self._last_degraded = {"reason": page.degraded, "at": self.now().isoformat()}
            if page.degraded != self._warned:
                log.warning("search answered in keyword mode: %s", page.degraded)
                self._warned = page.degraded
        note = self._scope_note(request.scope, current_session) if not page.total else None
        return page.model_copy(update={"hint": note}) if note else page

    def _early_embedding(self, request: SearchInput) -> QueryEmbedding | None:
        """The query's embedding, started before the index is even checked when the last search had
        a semantic leg (the model is loaded): waking the embedding thread and the ONNX run then
        overlap the checks and the keyword leg instead of starting after them
        (`scripts/bench_search_ab.py --first-asked` measures it). None for keyword mode or a query
        with nothing to embed."""
        if self._embedder is None or request.mode == "keyword" or not embeddable(request.query):
            return None
        return query_embedding(request.query, self.synonyms).started(self._embedder)

    def last(self, request: LastInput, *, current_session: str | None = None) -> StepList:
        steps = self._guarded(lambda: last_steps(self._view(current_session), request))
        note = self._scope_note(request.scope, current_session) if not steps.total else None
        return steps.model_copy(update={"hint": note}) if note else steps

    def _scope_note(self, scope: Scope, current_session: str | None) -> str | None:
        """Why a read of one session found nothing, when the session explains it (a note, not
        an error): it does not exist, or its folder holds steps the index does not — an agent
        asking right after recording is about a second ahead of the writer."""
        session_id = scope_session(scope, current_session)
        if session_id is None:
            return None
        if not session_dir(self.root, session_id).is_dir():
            return (
                f"No session {session_id!r} under {self.root}; list the sessions to see which "
                "exist."
            )
        behind = len(KnowledgeStore(self.root).step_names(session_id)) - self._held(session_id)
        if behind <= 0:
            return None
        steps = "1 recorded step" if behind == 1 else f"{behind:,} recorded steps"
        return (
            f"Session {session_id!r} has {steps} the index does not hold: a step is indexed "
            "about a second after it is recorded (ask again), and files that cannot be read "
            "are skipped (the index status lists them). Its recipe (summarize) reads the files."
        )

    def find_duplicates(self, request: DuplicatesInput) -> DuplicateList:
        """Groups of near-identical memories (spec 004), largest first."""

        def run() -> DuplicateList:
            reader = self.reader
            view = self._view(reader=reader)
            return find_duplicates(view, self._text_groups(reader.path), request)

        return self._guarded(run)

    def cluster(self, request: ClusterInput) -> ClusterList:
        """k clusters of one type of memory, each with its size, top terms and examples."""

        def run() -> ClusterList:
            reader = self.reader
            return cluster(self._view(reader=reader), self._text_groups(reader.path), request)

        return self._guarded(run)

    def sessions(self, request: SessionsInput) -> SessionList:
        return self._guarded(lambda: session_list(self._view(), request))

    def session_page(self, offset: int, limit: int) -> SessionList:
        """Every session, newest first, a page at a time (`engine.history.session_page`)."""
        return self._guarded(lambda: session_page(self._view(), offset, limit))

    def session(self, session_id: str) -> SessionSummary | None:
        """One session as the index lists it (None: not indexed, or not in this root)."""
        return self._guarded(lambda: one_session(self._view(), session_id))

    def term_counts(self, field: str, prefix: str, limit: int) -> list[tuple[str, int]]:
        """The values of an exact-match field (`RAW_FIELDS`: lowercased) that begin with
        `prefix`, each with how many documents hold it, the most frequent first, at most
        `limit`: what argument completion offers. One walk of the term dictionary, no
        document read."""
        return self._guarded(
            lambda: list(self.reader.searcher().terms_with_prefix(field, prefix, None, limit)),
            searches=0,
        )

    def document_counts(self) -> dict[str, int]:
        """Step and session documents in the live generation (for status)."""
        return self._guarded(lambda: document_counts(self.reader))

    def newest_session(self) -> str | None:
        """The most recently created session (what the CLI's scope "current" means by default)."""

        def run() -> str | None:
            reader = self.reader
            return newest_session_id(reader.searcher(), reader.schema)

        return self._guarded(run)

    def summarize(
        self, request: SummarizeInput, *, current_session: str | None = None
    ) -> SessionRecipe:
        return summarize(self.root, request, current_session, self._failed_steps)

    def _failed_steps(self, session_id: str) -> int:
        """How many steps of a session failed, as the index holds it (a long session's
        summary counts them here rather than reading every step file)."""
        return self._held(session_id, failed=True)

    def _held(self, session_id: str, *, failed: bool = False) -> int:
        """How many steps of a session the index holds (only the failed ones: `failed`)."""
        view = self._view()
        steps = [step_filter(view.schema), term(view.schema, "session_id", session_id)]
        if failed:
            steps.append(term(view.schema, "ok", "false"))
        return count(view.searcher, all_of(*steps))

    def timeline(self, request: TimelineInput) -> TimelineResult:
        """The steps around an anchor: the given step, or the best search hit of `query`
        (over all sessions, superseded steps hidden, as a search would rank it)."""
        return self._guarded(lambda: self._timeline(request))

    def _timeline(self, request: TimelineInput) -> TimelineResult:
        view = self._view()
        anchor = request.anchor
        if anchor is None:
            query = request.query or ""
            found = self.search(SearchInput(query=query, limit=1))
            steps = found.steps()
            if not steps:
                raise NotFound(f"query: no step matches {query!r}; try other words or an anchor")
            anchor = steps[0].stepId
        return timeline(
            view.searcher, view.schema, anchor, request.before, request.after, request.scope
        )

    def step_context(self, request: StepInput) -> StepContext:
        """The session a step came from and how it was used since (created or recalled)."""

        def run() -> StepContext:
            view = self._view()
            return step_context(view.searcher, view.schema, request.stepId)

        return self._guarded(run)

    def prior_knowledge(self, context: ScreenContext) -> PriorKnowledge:
        """What worked last time on this screen, from every session but the current one."""

        def run() -> PriorKnowledge:
            reader = self.reader
            return prior_knowledge(reader.searcher(), reader.schema, context, self.now())

        return self._guarded(run)

    def activity(self) -> Activity | None:
        """Steps and failures per day, flow and screen, from the index alone (the web page's
        charts); None when it holds no step. Counted once per commit: a page reloaded while
        nothing was recorded answers at once."""

        def run() -> Activity | None:
            reader = self.reader
            key = (reader.path, reader.commit)
            if self._activity is None or self._activity[0] != key:
                self._activity = (key, count_activity(reader.searcher(), reader.schema))
            return self._activity[1]

        return self._guarded(run)

    def renames(self) -> list[RenamedId]:
        """The testIds the live generation knows renamed, on every screen, oldest first."""
        renamed = self._kept.renames(self.reader.path)
        return sorted((r for ids in renamed.values() for r in ids), key=lambda r: r.since)


def _verify(check: GenerationCheck, *, full: bool) -> None:
    """Verify a generation; damage is reported to every process, then raised."""
    try:
        check.verify(full=full)
    except IndexDamaged as exc:
        report_damage(check.path, exc.reason)
        raise
