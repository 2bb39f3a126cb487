"""The fused order's ties, put in step-id order only where a page reaches them, and the key
numbers the semantic leg scores candidates by (fast fields instead of stored documents)."""

from typing import cast

import pytest
import tantivy
from hypothesis import given
from hypothesis import strategies as st

from engine.embedding import KeyNumbers, key_number, text_key
from engine.meaning import Hit, fuse, settle

NO_SEARCHER = cast(tantivy.Searcher, None)
"""The hits below hold their documents already: no searcher is asked for one."""


def _hits(rows: list[tuple[int, int, bool]]) -> list[Hit]:
    """Hits scored (similarity, created, exact) from small integers: many ties."""
    hits = []
    for i, (similarity, created, exact) in enumerate(rows):
        hit = Hit((0, i), tantivy.DocAddress(0, i), NO_SEARCHER, created, similarity=similarity)
        hit.exact, hit.read = exact, {"step_id": [f"s/{(i * 7919) % 1000:04d}"]}
        hits.append(hit)
    return hits


def _full_order(hits: list[Hit]) -> list[str]:
    """What the order must be: by the fused key, then step id."""
    return [h.step_id for h in sorted(hits, key=lambda h: (h.tie, h.step_id))]


@given(
    st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans()), max_size=60),
    st.integers(0, 70),
    st.integers(0, 25),
)
def test_a_page_is_the_slice_of_the_order_with_ties_by_step_id(
    rows: list[tuple[int, int, bool]], offset: int, limit: int
) -> None:
    hits = fuse(_hits(rows), weight=1.0)
    expected = _full_order(hits)[offset : offset + limit]
    settle(hits, offset, offset + limit)
    assert [h.step_id for h in hits[offset : offset + limit]] == expected


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.booleans()), max_size=60))
def test_settling_everything_is_sorting_by_step_id_within_ties(
    rows: list[tuple[int, int, bool]],
) -> None:
    hits = fuse(_hits(rows), weight=1.0)
    expected = _full_order(hits)
    settle(hits, 0, len(hits))
    assert [h.step_id for h in hits] == expected


@given(
    st.lists(
        st.tuples(st.floats(0.05, 0.9), st.one_of(st.none(), st.floats(0.1, 20.0))),
        min_size=2,
        max_size=40,
    ),
    st.floats(0.0, 1.0),
)
def test_each_leg_counts_over_the_range_its_candidates_span(
    rows: list[tuple[float, float | None]], weight: float
) -> None:
    """Similarity is spread from the farthest candidate (0) to the closest (1), keyword score
    from none (0) to the best (1): the model's cosines for unrelated texts are not 0, so dividing
    by the best alone squeezed every semantic candidate into the top of the range."""
    hits = _hits([(0, 0, False)] * len(rows))
    for hit, (similarity, keyword) in zip(hits, rows, strict=True):
        hit.similarity, hit.keyword = similarity, keyword
    low, high = min(r[0] for r in rows), max(r[0] for r in rows)
    best_kw = max((r[1] for r in rows if r[1] is not None), default=0.0) or 1.0
    for hit in fuse(hits, weight):
        assert hit.similarity is not None
        sim = (hit.similarity - low) / (high - low) if high > low else 1.0
        keyword = (hit.keyword or 0.0) / best_kw
        assert hit.score == pytest.approx((1 - weight) * keyword + weight * sim)


def test_key_numbers_find_rows_and_nothing_else() -> None:
    keys = [text_key("model", text) for text in ("click send", "the home screen", "swap")]
    numbers = KeyNumbers(keys)
    unknown = key_number(text_key("model", "never embedded"))
    wanted = [key_number(keys[2]), None, unknown, key_number(keys[0]), key_number(keys[2])]
    assert numbers.rows_of(wanted).tolist() == [2, -1, -1, 0, 2]
    assert KeyNumbers([]).rows_of([key_number(keys[0]), None]).tolist() == [-1, -1]
