"""The semantic leg: how close a step's texts are to the query's meaning.

Cosines are computed against the generation's distinct texts (`engine.embedding.vectors`: hundreds
to thousands of rows, not one per step), then the steps carrying the closest texts are fetched from
Tantivy with the search's filters (`engine.query.filters.search_filters`), so scope, filters and the
superseded rule hold here exactly as in keyword search. A step's semantic score blends its own
text with the screen it observed (`SCREEN_WEIGHT`); the session text (goal, flowTags) is stored
and embedded but left out of the blend: on the eval corpus it pulled every step of a matching
session (launch, unlock, observe) above the steps that did the thing asked
(`scripts/bench_quality.py`; docs/architecture.md, engine/meaning/).
"""

import atexit
import logging
import os
import queue
import threading
import time
import weakref
from collections.abc import Callable
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import cache, partial
from typing import Any, Generic, TypeVar

import numpy as np
import tantivy
from threadpoolctl import threadpool_limits

from analyzers import names_something
from engine.embedding import Embedder, KeyNumbers, VectorReader, Vectors
from engine.index import KEY_COLUMNS, doc_key, is_observation_text
from engine.query import FilterClauses, ReadView

SCREEN_WEIGHT = 0.3
OBSERVATION_WEIGHT = 0.8
"""What an observing step's own text (`look at the send screen`) counts against an action's: an
observation names everything on a screen, so it is near most queries about that screen, and ranked
level with the actions it pushed the step that did the thing asked out of the first ten
(`scripts/bench_quality.py`; docs/architecture.md, engine/meaning/). When the query asks what a
screen shows (its words mean `look at`, `take a screenshot`…: `analyzers.glossary`), the roles swap:
the actions count this much, the observations fully (similarities stay within 0..1)."""
NEAREST_TEXTS = 64
"""Closest distinct texts whose steps become semantic candidates."""
CANDIDATE_DEPTH = 200
"""Steps fetched for those texts (ordered by their blended score afterwards)."""
NEAREST_PHRASES = 3
"""Recorded action texts an empty answer suggests."""
PHRASE_CANDIDATES = 200
"""Nearest texts an empty answer looks through for those phrases (one small query each)."""
DEFAULT_MIN_SIMILARITY = 0.2
"""Below this cosine a step is no semantic hit (MiniLM scores unrelated UI texts ~0-0.2)."""
EMBED_TIMEOUT_S = 1.0
"""A query's embedding normally takes a small part of this (`scripts/bench_model.py`); one that
takes longer is given up on and the search answers by keywords, saying why."""
EMBED_TIMEOUT_ENV = "KNOWHOW_EMBED_TIMEOUT_MS"
"""Overrides the timeout (milliseconds): a machine that is slow or heavily shared needs more."""
log = logging.getLogger(__name__)
T = TypeVar("T")
S = TypeVar("S")


class EmbeddingTimeout(Exception):
    """The query could not be embedded in time; the message says so (shown as `degraded`)."""


def configured_embed_timeout() -> float:
    """Seconds a search waits for the query's embedding: `KNOWHOW_EMBED_TIMEOUT_MS`, else
    `EMBED_TIMEOUT_S` (also when the variable is not a positive number, with a warning)."""
    value = os.environ.get(EMBED_TIMEOUT_ENV)
    if not value:
        return EMBED_TIMEOUT_S
    try:
        millis = float(value)
    except ValueError:
        millis = 0.0
    if not millis > 0:
        log.warning("%s=%r is not a positive number of ms; using 1000", EMBED_TIMEOUT_ENV, value)
        return EMBED_TIMEOUT_S
    return millis / 1000


def embeddable(query: str) -> bool:
    """A query with no word to search for (only stopwords, punctuation or symbols:
    `analyzers.names_something`) embeds to noise: it is not embedded (search answers it
    empty, saying so)."""
    return names_something(query)


@dataclass
class SemanticLeg:
    """The model and the vectors of one generation, for one query."""

    embedder: Embedder
    vectors: VectorReader
    timeout: float = EMBED_TIMEOUT_S

    def start(
        self,
        query: str,
        then: Callable[["Similarities"], T],
        observing: bool = False,
        vector: "Future[Vectors] | None" = None,
    ) -> "PendingMeaning[T]":
        """Embed the query on the embedding thread, then run `then` with its similarities
        there too, and return at once: a search starts it before its keyword leg, so the model
        and the semantic leg's own Tantivy searches (which release the GIL) run
        while the keyword leg searches, on a second core when there is one.
        `observing`: the query asks what a screen shows (`text_weights`). `vector`: the
        query's vector, when `embed_soon` started it earlier (by the same embedder)."""
        if vector is None:
            vector = embed_soon(self.embedder, query)
        self.vectors.refresh()
        found: Future[T] = Future()
        _jobs.put(partial(self._then, vector, then, observing, found))
        return PendingMeaning(
            self, vector, found, time.monotonic() + self.timeout, self.vectors.numbered
        )

    def similarities(self, vector: Vectors, observing: bool = False) -> "Similarities":
        """Cosine of a query's vector to every stored text, times the text's weight
        (`text_weights`)."""
        matrix = self.vectors.matrix
        if not len(matrix):
            return Similarities(np.zeros(0, np.float32), self.vectors.keys, self.vectors.numbered)
        cos = (matrix @ vector) * text_weights(self.vectors, observing)
        return Similarities(cos, self.vectors.keys, self.vectors.numbered)

    def _then(
        self,
        vector: "Future[Vectors]",
        then: Callable[["Similarities"], T],
        observing: bool,
        found: "Future[T]",
    ) -> None:
        """The embedding thread's job after the query's ONNX run (queued before it, so the
        vector is there, failed or cancelled): what `then` finds with it, unless the search
        stopped waiting (`found` cancelled); failures are handed over."""
        if not vector.done() or vector.cancelled() or vector.exception() is not None:
            found.cancel()  # the search raises the vector's failure (`PendingMeaning`)
            return
        if not found.set_running_or_notify_cancel():
            return
        try:
            found.set_result(then(self.similarities(vector.result(), observing)))
        except BaseException as exc:  # a Tantivy panic too: the search raises it, not us
            found.set_exception(exc)


def embed_soon(embedder: Embedder, text: str) -> "Future[Vectors]":
    """Start embedding `text` on the embedding thread; its vector comes through the future.

    The text is tokenized here, so the thread wakes to a ready ONNX run: waking a sleeping
    thread is not free (on VMs without guest halt polling, a noticeable part of a search), and
    a search starts its query's embedding before it even checks the index, so that the wake
    and the run overlap the checks and the keyword leg (docs/architecture.md, "How a search
    travels"; `scripts/bench_search_ab.py --phases` times the parts). Cancelling the
    future before the thread reaches it skips the run (a search answered from its cache)."""
    _one_blas_thread()
    ids, mask = embedder.tokenize(text)
    vector: Future[Vectors] = Future()
    _ensure_worker()
    _jobs.put(partial(_embed_job, embedder, ids, mask, vector))
    return vector


def _embed_job(
    embedder: Embedder,
    ids: "np.ndarray[Any, Any]",
    mask: "np.ndarray[Any, Any]",
    vector: "Future[Vectors]",
) -> None:
    if not vector.set_running_or_notify_cancel():
        return
    try:
        vector.set_result(embedder.embed_tokens(ids, mask))
    except Exception as exc:  # handed to the waiting search, which raises it
        vector.set_exception(exc)


@dataclass(frozen=True, slots=True)
class PendingMeaning(Generic[T]):
    """A query being embedded (and looked up), with the time by which its vector must be
    there."""

    leg: SemanticLeg
    vector: "Future[Vectors]"
    found: "Future[T]"
    deadline: float
    """`time.monotonic()` at which the search gives up waiting (timeout from the start)."""
    numbered: "KeyNumbers"
    """The text numbers when it started (`KeyRows.of` before the similarities are known; the
    similarities' own, `Similarities.numbered`, differ only if the store grew meanwhile)."""

    def result(self) -> T:
        """What `then` of `SemanticLeg.start` returned; `EmbeddingTimeout` when the model has
        not answered within the timeout of `start`. An ONNX run cannot be interrupted: a
        late one finishes on its (daemon) thread, its vector unused, and queries behind it wait
        their own timeout (answered by keywords)."""
        self._embedded_in_time()
        return self.found.result()

    def handed_over(self, stage: "Future[S]") -> S:
        """A value `then` hands over through `stage` before it returns, so that the caller can
        work with it while `then` goes on; `EmbeddingTimeout` as `result`. `then` must set
        `stage` (or its exception) whatever happens: it is waited for without a timeout once
        the query is embedded."""
        self._embedded_in_time()
        return stage.result()

    def _embedded_in_time(self) -> None:
        try:
            self.vector.result(timeout=max(0.0, self.deadline - time.monotonic()))
        except FutureTimeout:
            self.vector.cancel()  # not embedded at all if the thread has not started on it
            self.found.cancel()
            raise EmbeddingTimeout(
                f"embedding the query took longer than {self.leg.timeout * 1000:.0f} ms"
            ) from None

    def nearest_phrases(
        self, sims: "Similarities", view: ReadView, within: FilterClauses
    ) -> list[str]:
        """The distinct action texts (what steps did, not goals or screens) nearest the query,
        best first: what an empty answer suggests instead (spec 004's helpful empty results).
        Only texts of steps the search's scope and filters (`within`) keep: a phrase that no
        step in reach says would send the agent into a second empty answer. At most
        `PHRASE_CANDIDATES` texts are looked up, so an empty answer stays cheap."""
        texts = self.leg.vectors.texts()
        phrases: list[str] = []
        for row in np.argsort(-sims.cos, kind="stable")[:PHRASE_CANDIDATES]:
            key = sims.keys[row]
            text = texts.get(key)
            if text and text not in phrases and _said_by_a_step(view, key, within):
                phrases.append(text)
                if len(phrases) == NEAREST_PHRASES:
                    break
        return phrases


def _said_by_a_step(view: ReadView, key: str, within: FilterClauses) -> bool:
    """Whether a step that `within` keeps has `key` as its own text."""
    query = tantivy.Query.boolean_query(
        [(tantivy.Occur.Must, tantivy.Query.term_query(view.schema, "sem_step", key)), *within]
    )
    return view.searcher.search(query, limit=1, count=False).hits != []


_weights: "weakref.WeakKeyDictionary[VectorReader, tuple[list[str], Vectors, Vectors]]" = (
    weakref.WeakKeyDictionary()
)


def text_weights(vectors: VectorReader, observing: bool = False) -> Vectors:
    """Per stored text (in row order), what its cosine counts: `OBSERVATION_WEIGHT` for an
    observing step's own text, else 1; the other way round for a query that asks what a
    screen shows (`observing`). Kept per store until it grows (the texts are read again then:
    once per commit, not per search)."""
    keys = vectors.keys
    known = _weights.get(vectors)
    if known is None or known[0] is not keys:
        texts = vectors.texts()
        observations = np.array([is_observation_text(texts.get(key, "")) for key in keys], bool)
        weighed_down = np.float32(OBSERVATION_WEIGHT)
        known = (
            keys,
            np.where(observations, weighed_down, np.float32(1.0)),
            np.where(observations, np.float32(1.0), weighed_down),
        )
        _weights[vectors] = known
    return known[2] if observing else known[1]


_jobs: "queue.SimpleQueue[Callable[[], None] | None]" = queue.SimpleQueue()
_worker: threading.Thread | None = None
_worker_lock = threading.Lock()
EXIT_WAIT_S = 5.0
"""How long a process that ends waits for the model run its embedding thread is in: a run
torn down by the interpreter's exit aborts the process ("terminate called without an active
exception"), e.g. a query embedded early for a search that then answered by keywords."""


def _ensure_worker() -> None:
    """The embedding thread, started on first use (and again if it ever died)."""
    global _worker
    with _worker_lock:
        if _worker is None or not _worker.is_alive():
            _worker = threading.Thread(target=_embed_jobs, name="knowhow-embed", daemon=True)
            _worker.start()


def _embed_jobs() -> None:
    """Run the queued jobs; each is let go once done, not when the next one comes: a search's
    job holds its read view, whose Tantivy searcher keeps the generation's index open (its
    segment files mapped, a thread watching its `meta.json`) long after the engine is gone."""
    while (job := _jobs.get()) is not None:
        job()
        del job


@atexit.register
def _finish_at_exit() -> None:
    """Let the embedding thread finish what it runs before the interpreter goes (its jobs
    queued before this one run first: a cancelled one returns at once)."""
    worker = _worker
    if worker is not None and worker.is_alive():
        _jobs.put(None)
        worker.join(EXIT_WAIT_S)


@cache
def _one_blas_thread() -> None:
    """One query against a few thousand texts is a matrix-vector product too small to share:
    OpenBLAS's threads cost more to wake (and spin) than they save, and a sum split over threads
    depends on the machine's core count. Set once for the process; the searcher's other numpy work
    is not BLAS-bound."""
    threadpool_limits(limits=1, user_api="blas")


@dataclass(frozen=True, slots=True)
class KeyRows:
    """The vector rows of step documents' texts (step and screen; -1: none), read from the key
    columns (`schema.KEY_COLUMNS`): no stored document is read, and the query's vector is not
    needed yet (a search reads its window's while the query is being embedded)."""

    step: "np.ndarray[Any, Any]"
    screen: "np.ndarray[Any, Any]"

    @classmethod
    def of(
        cls, searcher: tantivy.Searcher, addresses: list[tantivy.DocAddress], numbered: KeyNumbers
    ) -> "KeyRows":
        return cls(
            numbered.rows_of(searcher.fast_field_values(KEY_COLUMNS["step"], addresses)),
            numbered.rows_of(searcher.fast_field_values(KEY_COLUMNS["screen"], addresses)),
        )


@dataclass(frozen=True, slots=True)
class Similarities:
    cos: Vectors
    keys: list[str]
    numbered: "KeyNumbers"

    def of_documents(
        self, searcher: tantivy.Searcher, addresses: list[tantivy.DocAddress]
    ) -> list[float]:
        """The blended similarity of step documents (0 for texts without a vector)."""
        return self.blend(KeyRows.of(searcher, addresses, self.numbered))

    def blend(self, rows: KeyRows) -> list[float]:
        """The blended similarity of the documents whose rows these are (of `self.numbered`)."""
        blend = (self._cos(rows.step) + SCREEN_WEIGHT * self._cos(rows.screen)) / (
            1 + SCREEN_WEIGHT
        )
        return [float(value) for value in np.where(blend > 0.0, blend, 0.0)]

    def _cos(self, rows: "np.ndarray[Any, Any]") -> "np.ndarray[Any, np.dtype[np.float64]]":
        """The cosine of each row's text (0 without one: no text, or no vector)."""
        if not len(self.cos):
            return np.zeros(len(rows))
        return np.where(rows >= 0, self.cos[rows].astype(np.float64), 0.0)


def top_rows(values: Vectors, k: int) -> "np.ndarray[Any, Any]":
    """The rows of the `k` largest values, largest first, equal values in row order: what
    `np.argsort(-values, kind="stable")[:k]` answers, without sorting every stored text (a
    partition is linear, a sort is not; this runs on the embedding thread, which a hybrid
    search waits for)."""
    negated = -values
    if len(negated) <= k:
        return np.argsort(negated, kind="stable")
    kth = np.partition(negated, k - 1)[k - 1]
    above = np.flatnonzero(negated < kth)
    rows = np.concatenate([above, np.flatnonzero(negated == kth)[: k - len(above)]])
    if len(rows) < k:  # NaNs, which sort last: the full sort says where
        return np.argsort(negated, kind="stable")[:k]
    return rows[np.lexsort((rows, negated[rows]))]


def nearest_steps(view: ReadView, sims: Similarities) -> tantivy.Query | None:
    """The steps carrying one of the texts closest to the query (None: no text is close at
    all), each scoring its blend (step text + `SCREEN_WEIGHT` x screen text) for those texts,
    so that Tantivy returns the closest steps first. A clause only where some step holds the
    text in that field (`TermCounts.doc_freqs`): a text is mostly a step's, a screen's or a
    session's, so most clauses of all three fields would be term lookups that
    match nothing (`scripts/bench_speed.py`'s queries), paid in building the query and in both
    searches that run it."""
    if not len(sims.cos):
        return None
    nearest = [int(i) for i in top_rows(sims.cos, NEAREST_TEXTS)]
    counts, schema = view.term_counts(), view.schema
    near = [
        (
            tantivy.Occur.Should,
            tantivy.Query.const_score_query(
                tantivy.Query.term_query(schema, field, sims.keys[row]),
                float(sims.cos[row]) * weight / (1 + SCREEN_WEIGHT),
            ),
        )
        for row in nearest
        if sims.cos[row] > 0
        for field, weight in _BLENDED_FIELDS
        if field in counts.doc_freqs(sims.keys[row], _KEY_FIELDS)
    ]
    return tantivy.Query.boolean_query(near) if near else None


_BLENDED_FIELDS = (("sem_step", 1.0), ("sem_screen", SCREEN_WEIGHT))
_KEY_FIELDS = tuple(field for field, _ in _BLENDED_FIELDS)


def semantic_candidates(
    view: ReadView,
    filters: FilterClauses,
    near: tantivy.Query | None,
    sims: Similarities,
    min_similarity: float,
) -> dict[tuple[int, int], tuple[float, tantivy.DocAddress]]:
    """The first `CANDIDATE_DEPTH` steps of `near` passing the search's filters, with their
    blended similarity, keeping those >= `min_similarity`."""
    if near is None:
        return {}
    query = tantivy.Query.boolean_query([*filters, (tantivy.Occur.Must, near)])
    addresses = [a for _, a in view.searcher.search(query, limit=CANDIDATE_DEPTH, count=False).hits]
    similarities = sims.of_documents(view.searcher, addresses)
    return {
        doc_key(address): (similarity, address)
        for address, similarity in zip(addresses, similarities, strict=True)
        if similarity >= min_similarity
    }
