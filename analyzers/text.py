"""SPEC-03 `tokenize`: bag-of-words tokens of free text (FR-1..3)."""

import re
import unicodedata
from collections.abc import Iterable, Sequence

from analyzers.stopwords import is_searchable

# Unicode-aware version of SPEC-03's `/[^a-z0-9]+/i`: letters and digits of any script are kept.
_NON_WORD = re.compile(r"[\W_]+")
_WORD = re.compile(r"\w+(?:[-.]\w+)*")
"""A word as the index and query analyzers read it: an identifier joined by `-` or `.` stays
one word (`coin-overview-send`, `eth_sign`)."""


def normalize(text: str) -> str:
    """NFKC: one spelling per character (`Cafe\u0301` = `Café`, full-width = ASCII, `ﬁ` = `fi`)."""
    return unicodedata.normalize("NFKC", text)


def tokenize(text: str | None) -> list[str]:
    """Lowercase words of `text`, without stopwords or tokens shorter than 2, deduplicated in order.

    >>> tokenize("send flow ETH to another account")
    ['send', 'eth', 'another', 'account']
    """
    if not text:
        return []
    seen: dict[str, None] = {}
    for raw in _NON_WORD.split(normalize(text)):
        token = lower_chars(raw)
        if token and is_searchable(token):
            seen.setdefault(token, None)
    return list(seen)


def words(text: str) -> list[str]:
    """The words of `text` (normalized) as the index and query analyzers read them, in order.

    >>> words("Click coin-overview-send, v1.2")
    ['Click', 'coin-overview-send', 'v1.2']
    """
    return _WORD.findall(normalize(text))


def lower_chars(text: str) -> str:
    """Lowercase character by character, so that the result does not depend on neighbours
    (str.lower() turns a Greek capital sigma into a final sigma only at the end of a word)."""
    return "".join(ch.lower() for ch in text)


def holds_phrase(said: Sequence[str], phrases: Iterable[Sequence[str]]) -> bool:
    """Whether the words `said` hold any of `phrases` (each a sequence of words) as
    consecutive words.

    >>> holds_phrase(["make", "sure", "it", "shows"], [("make", "sure"), ("check", "that")])
    True
    """
    return any(
        tuple(said[i : i + len(phrase)]) == tuple(phrase)
        for phrase in phrases
        for i in range(len(said) - len(phrase) + 1)
    )
