"""`stem`: inflections agents type must meet; short, non-ASCII or digit words stay as they are."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from analyzers import stem

ascii_words = st.from_regex(r"[a-z]{1,16}", fullmatch=True)


@pytest.mark.parametrize(
    "forms",
    [
        ("send", "sends", "sending"),
        ("swap", "swaps", "swapped", "swapping"),
        ("confirm", "confirms", "confirmed", "confirming"),
        ("token", "tokens"),
        ("account", "accounts"),
        ("network", "networks"),
        ("approve", "approved", "approves"),
    ],
)
def test_inflections_meet(forms):
    assert len({stem(form) for form in forms}) == 1


@pytest.mark.parametrize(("a", "b"), [("settings", "set"), ("send", "sent"), ("swap", "swat")])
def test_different_words_stay_apart(a, b):
    assert stem(a) != stem(b)


@pytest.mark.parametrize("word", ["eth", "dai", "0x539", "erc20", "发送", "überweisung", "a11y"])
def test_short_non_ascii_and_digit_words_are_left_alone(word):
    assert stem(word) == word


@given(st.text())
def test_stem_never_raises(word):
    assert isinstance(stem(word), str)


@given(ascii_words)
def test_stem_never_grows_and_never_makes_a_searchable_word_too_short(word):
    stemmed = stem(word)
    assert len(stemmed) >= min(len(word), 2)
    assert len(stemmed) <= len(word)
    assert stemmed.isascii()
    assert stemmed.isalpha()


# `stem(stem(w)) == stem(w)` does not hold (`false` -> `fals` -> `fal`), and need not: stemming
# is applied exactly once, on the index and the query side alike.
