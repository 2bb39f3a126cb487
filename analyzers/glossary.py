"""The wallet glossary: everyday words -> the words a wallet UI records, applied at query time.

Users say "ether", "passcode", "seed words", "hamburger"; recordings say ETH, password, secret
recovery phrase, account options. Neither the keyword index nor the small embedding model
bridges those, and the synonym groups (`analyzers.synonyms`) are symmetric groups of actions, so
a one-way table of *concepts* does it: each has the app's words and the everyday expressions that
mean them (`analyzers.glossary_data`). A query's expressions are found on stemmed words, longest
first; the query itself is never changed, only added to: the keyword side adds the app's words
as weaker terms (`analyzers.analyze.GLOSSARY_WEIGHT`), the semantic side embeds the query with
the app's words appended beside the query itself (`Glossary.gloss`).

Identifiers are left alone: an expression matches whole query words only, and a compound word
(`coin-overview-send`, `sendButton`) only when the expression spells all of it
(`cross-chain`), so an identifier query gains nothing and keeps its exact tier.

Users extend the table through the synonyms file (`KNOWHOW_SYNONYMS`):
`{"glossary": [{"says": ["moolah"], "means": ["ETH", "balance"]}]}`.
"""

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from analyzers.glossary_data import DEFAULT_CONCEPTS, Concept
from analyzers.identifiers import split_identifier
from analyzers.stemming import stem
from analyzers.text import words

FILLERS = (
    *("it", "them", "this", "that", "these", "those"),
    *("me", "us", "him", "her", "back", "again"),
    *("everything", "something", "anything", "all", "things", "stuff"),
)
"""Words people put inside a phrasal verb (`turn it off`, `log me back in`, `switch them back
on`, `shut everything down`): an expression still matches with up to `MAX_FILLERS` of them
between its words."""
MAX_FILLERS = 2


def query_words(text: str) -> list[list[str]]:
    """Per word of `text` (as the query analyzer reads words), the stems of its parts."""
    return [[stem(p) for p in split_identifier(word)] for word in words(text)]


_FILLER_STEMS = frozenset(tuple(word) for word in query_words(" ".join(FILLERS)))


@dataclass(frozen=True, slots=True)
class GlossMatch:
    """An everyday expression found in a query: the words it spans and what it means."""

    start: int
    """Index of its first query word."""
    end: int
    """Index after its last query word."""
    expression: str
    means: tuple[str, ...]
    """The app's words it stands for (several concepts' words when they share the expression)."""


def _expression_key(expression: str) -> tuple[str, ...]:
    return tuple(s for word in query_words(expression) for s in word)


def _build(concepts: Iterable[Concept]) -> dict[tuple[str, ...], tuple[str, tuple[str, ...]]]:
    index: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = {}
    for _name, means, says in concepts:
        own = {_expression_key(word) for word in means}
        for expression in says:
            key = _expression_key(expression)
            if not key or key in own:  # `sending` for `send`: the app's own word, no translation
                continue
            known = index.get(key)
            merged = tuple(dict.fromkeys([*(known[1] if known else ()), *means]))
            index[key] = (known[0] if known else expression, merged)
    return index


@dataclass(frozen=True)
class Glossary:
    """An immutable concept table keyed by the stems of its everyday expressions."""

    concepts: tuple[Concept, ...] = DEFAULT_CONCEPTS
    _index: dict[tuple[str, ...], tuple[str, tuple[str, ...]]] = field(
        init=False, repr=False, compare=False
    )
    _longest: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index = _build(self.concepts)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_longest", max((len(k) for k in index), default=0))

    @classmethod
    def from_entries(cls, entries: Any, *, include_defaults: bool = True) -> "Glossary":
        """`[{"says": [expression, ...], "means": [app word, ...]}, ...]` added to the built-in
        concepts (unless told otherwise); `ValueError` names what is malformed."""
        if not isinstance(entries, list):
            raise ValueError('glossary must be a list like [{"says": ["ether"], "means": ["ETH"]}]')
        concepts: list[Concept] = []
        for number, entry in enumerate(entries):
            says, means = _strings(entry, "says", number), _strings(entry, "means", number)
            concepts.append((f"user-{number}", means, says))
        base = DEFAULT_CONCEPTS if include_defaults else ()
        return cls(concepts=base + tuple(concepts))

    def matches(self, words: Sequence[Sequence[str]]) -> list[GlossMatch]:
        """The expressions found in a query's words (`query_words`), left to right, longest
        first, never overlapping. A compound word (several parts) is matched only whole.
        Adjacent expressions that share an app word are one (`priority charge`: both mean a
        gas fee), so the query side counts them as one concept."""
        found: list[GlossMatch] = []
        fillers = [tuple(word) in _FILLER_STEMS for word in words]
        start = 0
        while start < len(words):
            match = self._longest_at(words, start, fillers)
            if match is None:
                start += 1
                continue
            last = found[-1] if found else None
            if last is not None and last.end == match.start and set(last.means) & set(match.means):
                match = GlossMatch(
                    last.start,
                    match.end,
                    f"{last.expression} {match.expression}",
                    tuple(dict.fromkeys([*last.means, *match.means])),
                )
                found.pop()
            found.append(match)
            start = match.end
        return found

    def _longest_at(
        self, words: Sequence[Sequence[str]], start: int, fillers: Sequence[bool]
    ) -> GlossMatch | None:
        """The longest expression starting at `start`: spelled out word for word, or with up to
        `MAX_FILLERS` filler words (`FILLERS`, flagged in `fillers`) between its words passed
        over (`turn it off` is `turn off`; never at its ends). More of the expression's words
        win, then fewer words passed over."""
        partial: list[tuple[tuple[str, ...], int]] = [((), 0)]  # stems so far, words passed over
        best: tuple[int, int, GlossMatch] | None = None
        for end in range(start, len(words)):
            grown = [
                (stems + tuple(words[end]), skipped)
                for stems, skipped in partial
                if len(stems) + len(words[end]) <= self._longest
            ]
            for stems, skipped in grown:
                hit = self._index.get(stems)
                if hit is not None and (best is None or (len(stems), -skipped) > best[:2]):
                    best = (len(stems), -skipped, GlossMatch(start, end + 1, hit[0], hit[1]))
            if fillers[end] and end > start:
                grown += [
                    (stems, skipped + 1) for stems, skipped in partial if skipped < MAX_FILLERS
                ]
            if not grown:
                break
            partial = grown
        return best[2] if best else None

    def meanings(self, query: str) -> tuple[str, ...]:
        """The app's words the query's everyday expressions mean, in order, each once."""
        found = self.matches(query_words(query))
        return tuple(dict.fromkeys(word for match in found for word in match.means))

    def gloss(self, query: str) -> str | None:
        """`glossed(query, self.meanings(query))`."""
        return glossed(query, self.meanings(query))


def glossed(query: str, means: Sequence[str]) -> str | None:
    """The query followed by the app's words its expressions mean (`wire some ether` ->
    `wire some ether (send, ETH)`): the text the semantic side embeds beside the query. None
    when there are none (nothing to add)."""
    return f"{query.strip()} ({', '.join(means)})" if means else None


@cache
def default_glossary() -> Glossary:
    """The built-in glossary, built once (immutable, so every table shares it)."""
    return Glossary()


def _strings(entry: Any, key: str, number: int) -> tuple[str, ...]:
    """`entry[key]` as a non-empty list of strings, or `ValueError` saying what is wrong."""
    value = entry.get(key) if isinstance(entry, dict) else None
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError(
            f"glossary entry {number} must have a non-empty list of strings {key!r}, got {entry!r}"
        )
    return tuple(value)
