"""k clusters of one type of memory (spec 004 `memory_cluster`): seeded spherical k-means.

The points are the distinct texts of the memories that pass the filters, each weighted by how
many memories carry it — the same as clustering the memories themselves, whose vectors repeat,
at the cost of the distinct texts only. k-means++ seeding from a fixed seed, then Lloyd
iterations on cosine (centres renormalised), over the texts in store order: the same index and
request always give the same clusters. numpy only: a few thousand texts of 384 dimensions do
not need a clustering library.

A cluster is described by its size (memories), its top terms (c-TF-IDF: words frequent in it
and rare in the others, counted per memory), the text nearest its centre and a few memories
with the texts nearest its centre.
"""

import math
import re
from collections import defaultdict

import numpy as np
import numpy.typing as npt

from analyzers import STOPWORDS
from engine.core import Cluster, ClusterInput, ClusterList
from engine.embedding import GroupCache
from engine.meaning.memories_by_text import Memories, memories
from engine.query import ReadView

SEED = 7
MAX_ITERATIONS = 100
TOP_TERMS = 8
EXAMPLES = 5

Matrix = npt.NDArray[np.float64]
_WORD = re.compile(r"[^\W\d_][^\W_]+")
"""A word of two or more letters or digits, starting with a letter."""


def cluster(view: ReadView, cache: GroupCache | str, request: ClusterInput) -> ClusterList:
    """`cache` gives the vectors and texts, or says why there are none."""
    kind = request.type
    of_kind = memories(view, kind, request.filters, request.includeSuperseded)
    per_key = of_kind.counts
    answer = ClusterList(
        type=kind, nClusters=request.nClusters, memories=of_kind.total, clusters=[]
    )
    if isinstance(cache, str):
        return answer.model_copy(update={"degraded": cache})
    texts = cache.texts()
    rows = cache.vectors.rows
    keys = sorted((k for k in per_key if k in rows), key=rows.__getitem__)
    if not keys:
        return answer.model_copy(update={"hint": "No memories of this type match the filters."})
    points = np.asarray(cache.vectors.matrix[[rows[k] for k in keys]], np.float64)
    weights = np.array([per_key[k] for k in keys], np.float64)
    labels, centres = kmeans(points, weights, min(request.nClusters, len(keys)))
    members = [np.flatnonzero(labels == c) for c in range(len(centres))]
    terms = _top_terms([[texts.get(keys[i], "") for i in m] for m in members], members, weights)
    clusters = []
    for c, rows_in in enumerate(members):
        if not len(rows_in):
            continue
        nearest = rows_in[np.argsort(-(points[rows_in] @ centres[c]), kind="stable")]
        clusters.append(
            Cluster(
                size=int(weights[rows_in].sum()),
                distinctTexts=len(rows_in),
                topTerms=terms[c],
                text=texts.get(keys[nearest[0]]),
                examples=_examples(view, of_kind, [keys[i] for i in nearest]),
            )
        )
    clusters.sort(key=lambda c: (-c.size, c.text or ""))
    hint = None
    if len(clusters) < request.nClusters:
        hint = (
            f"{len(clusters)} clusters: the memories that match have only {len(keys)} "
            "distinct texts"
        )
    return answer.model_copy(update={"clusters": clusters, "hint": hint})


def _examples(view: ReadView, of_kind: Memories, nearest: list[str]) -> list[str]:
    """A few memories, from the texts nearest the centre on."""
    found: list[str] = []
    for key in nearest:
        if len(found) >= EXAMPLES:
            break
        found += of_kind.examples(view, [key], EXAMPLES - len(found))
    return found


def kmeans(points: Matrix, weights: Matrix, k: int) -> tuple[npt.NDArray[np.intp], Matrix]:
    """Weighted spherical k-means of unit rows: labels per point and unit centres, seeded."""
    rng = np.random.default_rng(SEED)
    chosen = [int(rng.choice(len(points), p=weights / weights.sum()))]
    distance = np.clip(1 - points @ points[chosen[0]], 0, None)
    while len(chosen) < k:
        spread = weights * distance**2
        if spread.sum() <= 0:  # every point already sits on a centre
            break
        chosen.append(int(rng.choice(len(points), p=spread / spread.sum())))
        distance = np.minimum(distance, np.clip(1 - points @ points[chosen[-1]], 0, None))
    centres = points[chosen].copy()
    labels = np.argmax(points @ centres.T, axis=1)
    for _ in range(MAX_ITERATIONS):
        assignment = np.zeros((len(centres), len(points)))
        assignment[labels, np.arange(len(points))] = weights
        sums = assignment @ points
        norms = np.linalg.norm(sums, axis=1, keepdims=True)
        centres = np.where(norms > 0, sums / np.where(norms > 0, norms, 1), centres)
        moved = np.argmax(points @ centres.T, axis=1)
        if np.array_equal(moved, labels):
            break
        labels = moved
    return labels, centres


def _top_terms(
    texts: list[list[str]], members: list[npt.NDArray[np.intp]], weights: Matrix
) -> list[list[str]]:
    """Per cluster, the words that set it apart: how many of its memories say the word, times
    how rare the word is among all memories (TF-IDF with a cluster as the document)."""
    per_cluster: list[dict[str, float]] = []
    overall: dict[str, float] = defaultdict(float)
    for cluster_texts, rows_in in zip(texts, members, strict=True):
        counter: dict[str, float] = defaultdict(float)
        for text, i in zip(cluster_texts, rows_in, strict=True):
            for word in set(_WORD.findall(text.lower())):
                if word not in STOPWORDS:
                    counter[word] += float(weights[i])
                    overall[word] += float(weights[i])
        per_cluster.append(counter)
    everyone = float(weights.sum())

    def score(word: str, weight: float) -> float:
        # A word every memory has (`screen`, `click`) says nothing about a cluster: idf 0.
        return weight * math.log(everyone / overall[word])

    return [
        [
            word
            for word, weight in sorted(counter.items(), key=lambda i: (-score(*i), i[0]))
            if score(word, weight) > 0
        ][:TOP_TERMS]
        for counter in per_cluster
    ]
