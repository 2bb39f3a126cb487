"""The semantic leg joined to the keyword results: the mode a search is answered in, the
semantic candidates fused with the keyword rerank window (`engine.meaning.fusion.fuse`), and why a
semantic-only hit matched. Exact matches (the keyword leg's first tier) stay first.
"""

from concurrent.futures import Future
from dataclasses import dataclass, replace

import tantivy

from analyzers import SynonymTable, asks_for_a_check, asks_what_is_shown, glossed
from engine.core import SearchInput
from engine.embedding import Embedder, Vectors
from engine.index import doc_key, names_an_observation, unscored
from engine.meaning.fusion import RERANK_WINDOW, Hit, fuse, semantic_weight
from engine.meaning.semantic_leg import (
    CANDIDATE_DEPTH,
    DEFAULT_MIN_SIMILARITY,
    KeyRows,
    PendingMeaning,
    SemanticLeg,
    Similarities,
    embed_soon,
    embeddable,
    nearest_steps,
    semantic_candidates,
)
from engine.query import FilterClauses, PlannedQuery, ReadView, scored_query

DocKey = tuple[int, int]
CHECKED_BY = "wait for"
"""What a query asking for a check (`analyzers.asks_for_a_check`: `how can I tell the site sees
my account`, `make sure the transfer shows up`) means in the words of the steps: a test checks by
waiting for what should show (`mm_wait_for`, whose text says `wait for …`: `step_texts`), so
its embedded text says so. Measured on every set in one run (`scripts/bench_quality.py`): the
kit's outside-voice sentences 0.660 -> 0.689, ours +0.001, no set lower."""


def meaning_fields(hit: Hit) -> list[str]:
    """Why a semantic-only hit matched: no query word, its meaning (every result says why)."""
    return [f"meaning:similarity {hit.similarity or 0.0:.2f}"]


def answer_mode(request: SearchInput, semantic: SemanticLeg | str) -> tuple[str, str | None]:
    """The mode a request is answered in, and why it is not the one asked for (None: it is)."""
    if request.mode == "keyword":
        return "keyword", None
    if isinstance(semantic, str):
        return "keyword", semantic
    if not embeddable(request.query):
        return "keyword", None  # nothing to embed: the keywords are all there is
    return request.mode, None


@dataclass(frozen=True, slots=True)
class SemanticFound:
    """What the semantic leg finds on its own, on the embedding thread (`start_meaning`)."""

    sims: Similarities
    """The query's cosine to every stored text."""
    candidates: dict[DocKey, tuple[float, tantivy.DocAddress, int]]
    """The semantic candidates passing the search's filters: similarity, address, created."""


@dataclass(frozen=True, slots=True)
class Meaning:
    """The semantic leg under way (`start_meaning`)."""

    pending: PendingMeaning[SemanticFound]
    near: "Future[tantivy.Query | None]"
    """The query of the steps nearest the query's meaning (`semantic_leg.nearest_steps`), handed
    over by the embedding thread as soon as it is built: while that thread looks up the
    semantic candidates, the caller asks which of them the keyword query matches (two
    searches at once, on two cores: Tantivy releases the GIL), instead of waiting for both."""


@dataclass(frozen=True, slots=True)
class QueryEmbedding:
    """What a search embeds for its query (`query_embedding`) and, once started, its vector."""

    text: str
    """The query with the app's words its everyday expressions mean appended
    (`analyzers.glossary`: one text, one ONNX run)."""
    observing: bool
    """The query asks what a screen shows (`step_texts.names_an_observation`): observing
    steps' texts are not weighed down, actions' are (`semantic_leg.text_weights`)."""
    vector: "Future[Vectors] | None" = None
    """Its vector under way (`semantic_leg.embed_soon`), when started before the search."""

    def started(self, embedder: Embedder) -> "QueryEmbedding":
        """This text with its embedding started on the embedding thread."""
        return replace(self, vector=embed_soon(embedder, self.text))

    def cancel(self) -> None:
        """Skip the ONNX run if the embedding thread has not begun it (the search did not
        need it: answered from the cache, or by keywords, or failed)."""
        if self.vector is not None:
            self.vector.cancel()


def query_embedding(query: str, synonyms: SynonymTable) -> QueryEmbedding:
    """What a search embeds for `query` (not started yet)."""
    means = synonyms.glossary.meanings(query)
    if asks_for_a_check(query):
        means = (*means, CHECKED_BY)
    observing = asks_what_is_shown(query) or any(names_an_observation(w) for w in means)
    return QueryEmbedding(glossed(query, means) or query, observing)


def start_meaning(
    leg: SemanticLeg,
    asked: QueryEmbedding,
    view: ReadView,
    request: SearchInput,
    filters: FilterClauses,
) -> Meaning:
    """Embed the query (`asked`; unless already started) and look up its semantic
    candidates on the embedding thread, while the caller runs the keyword leg."""
    min_similarity = _min_similarity(request)
    near_ready: Future[tantivy.Query | None] = Future()

    def find(sims: Similarities) -> SemanticFound:
        try:
            near = nearest_steps(view, sims)
        except BaseException as exc:  # the caller waits for `near` too: it raises this
            near_ready.set_exception(exc)
            raise
        near_ready.set_result(near)
        found = semantic_candidates(view, filters, near, sims, min_similarity)
        addresses = [address for _, address in found.values()]
        created = view.searcher.fast_field_values("created", addresses)
        return SemanticFound(
            sims,
            {
                key: (similarity, address, int(when or 0))
                for (key, (similarity, address)), when in zip(found.items(), created, strict=True)
            },
        )

    return Meaning(leg.start(asked.text, find, asked.observing, asked.vector), near_ready)


def _min_similarity(request: SearchInput) -> float:
    return request.minSimilarity if request.minSimilarity is not None else DEFAULT_MIN_SIMILARITY


def with_meaning(
    view: ReadView,
    request: SearchInput,
    ranked: list[Hit],
    total: int,
    meaning: Meaning,
    plan: PlannedQuery,
    filters: FilterClauses,
) -> tuple[list[Hit], int, Similarities]:
    """Hybrid or semantic: the semantic candidates (and, in hybrid, the keyword rerank window)
    fused; in hybrid the keyword hits past the window follow. Exact matches (the keyword leg's
    first tier) stay first, then the failures of a kind the query names (its failure tier).
    `total` counts every keyword match plus the semantic hits that match no keyword; the
    query's similarities come back too (an empty answer suggests the nearest texts)."""
    window = ranked[:RERANK_WINDOW] if request.mode != "semantic" else []
    # Read while the query may still be embedding: the rows of the window's texts.
    pending = meaning.pending
    rows = KeyRows.of(view.searcher, [hit.address for hit in window], pending.numbered)
    keyword_near = _keyword_matches(view, filters, pending.handed_over(meaning.near), plan)
    semantic = pending.result()
    sims, found = semantic.sims, semantic.candidates
    matching = found.keys() & keyword_near
    min_similarity = _min_similarity(request)
    exact = {hit.key: hit for hit in ranked if hit.exact}
    failed = {hit.key for hit in ranked if hit.failed}
    candidates: dict[tuple[int, int], Hit] = {}
    if sims.numbered is not pending.numbered:  # the store grew meanwhile: rows of its texts
        rows = KeyRows.of(view.searcher, [hit.address for hit in window], sims.numbered)
    for hit, similarity in zip(window, sims.blend(rows), strict=True):
        hit.similarity = similarity
        hit.semantic_match = hit.similarity >= min_similarity
        candidates[hit.key] = hit
    for key, (similarity, address, created) in found.items():
        if key not in candidates:
            candidates[key] = Hit(
                key,
                address,
                view,
                created,
                keyword=0.0 if key in matching else None,
                similarity=similarity,
                semantic_match=True,
                exact=key in exact,
                failed=key in failed,
                lead=key in exact and exact[key].lead,
                turn=exact[key].turn if key in exact else 0,
            )
    if request.mode == "semantic":
        return fuse(list(candidates.values()), 1.0), len(candidates), sims
    # How well the keyword leg's best answer covers the query (not the best coverage anywhere
    # in its window: one hit of 100 covering two words of three explains nothing when the top
    # ones do not; `scripts/bench_quality.py`).
    explained = window[0].coverage if window else 0.0
    nearest = max((hit.similarity or 0.0 for hit in candidates.values()), default=0.0)
    weight = semantic_weight(explained, plan.sentence, nearest)
    fused = fuse(list(candidates.values()), weight)
    past = [hit for hit in ranked[RERANK_WINDOW:] if hit.key not in candidates]
    best_kw = max((hit.keyword or 0.0 for hit in window), default=0.0) or 1.0
    for hit in past:  # on the fusion's scale: their keyword score relative to the best's
        hit.score = (1 - weight) * (hit.keyword or 0.0) / best_kw
    fused += past
    # stable: leads, exact, failures named, the rest
    fused.sort(key=lambda hit: (not hit.lead, not hit.exact, not hit.failed))
    semantic_only = sum(1 for key in found if key not in matching)
    return fused, total + semantic_only, sims


def _keyword_matches(
    view: ReadView, filters: FilterClauses, near: tantivy.Query | None, plan: PlannedQuery
) -> set[DocKey]:
    """Steps among the semantic candidates' pool that the keyword query matches (retrieval
    clauses, as `total` counts); the candidates it holds are those that match. Asked without
    naming the candidates, so it runs while they are looked up: they are the first
    `CANDIDATE_DEPTH` steps of the semantic query in Tantivy's order (score, then address),
    so the first `CANDIDATE_DEPTH` of the same query restricted to keyword matches (its scores
    unchanged: the keyword clauses are unscored) include every candidate that matches. One
    search, no list of step ids (naming every candidate's id costs a term lookup each)."""
    if near is None or not plan.clauses:
        return set()
    keyword = unscored(scored_query(view.schema, plan.clauses))
    query = tantivy.Query.boolean_query(
        [*filters, (tantivy.Occur.Must, near), (tantivy.Occur.Must, keyword)]
    )
    hits = view.searcher.search(query, limit=CANDIDATE_DEPTH, count=False).hits
    return {doc_key(address) for _, address in hits}
