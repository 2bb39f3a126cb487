"""Typo helpers: `edit_distance` against a plain optimal-string-alignment oracle, edit budgets."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import edit_distance, max_typo_edits


def osa_distance(a: str, b: str) -> int:
    """Reference optimal-string-alignment distance: the full table, no cut-off."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


@pytest.mark.parametrize(
    ("typo", "word"),
    [
        ("sned", "send"),
        ("swpa", "swap"),
        ("confrim", "confirm"),
        ("recipent", "recipient"),
        ("adress", "address"),
    ],
)
def test_common_typos_are_one_edit_and_within_budget(typo, word):
    assert edit_distance(typo, word) == 1
    assert edit_distance(word, typo) == 1
    assert max_typo_edits(typo) >= 1


@pytest.mark.parametrize(
    ("token", "edits"),
    [("", 0), ("eth", 0), ("send", 1), ("confirm", 1), ("recipent", 2), ("authentication", 2)],
)
def test_edit_budget_grows_with_length(token, edits):
    assert max_typo_edits(token) == edits


def test_distance_is_capped_at_limit_plus_one():
    assert edit_distance("send", "swap", limit=1) == 2
    assert edit_distance("a", "abcdefgh", limit=2) == 3
    assert edit_distance("same", "same", limit=0) == 0


small_words = st.text(alphabet="abcde", max_size=8)


@given(small_words, small_words, st.integers(min_value=0, max_value=4))
def test_edit_distance_matches_the_oracle_up_to_the_limit(a, b, limit):
    assert edit_distance(a, b, limit) == min(osa_distance(a, b), limit + 1)


@given(st.text(max_size=10), st.text(max_size=10))
def test_edit_distance_is_symmetric_and_zero_only_for_equal_words(a, b):
    assert edit_distance(a, b) == edit_distance(b, a)
    assert (edit_distance(a, b) == 0) == (a == b)
