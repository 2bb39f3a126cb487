"""The one analysis pipeline shared by the index and the query side.

`analyze` turns any field value (free text, testId, selector, tool or screen name) into the
tokens the index stores; `analyze_query` turns a user's query into weighted terms grouped by
the word they came from (a *concept*), which the engine turns into boosted term queries.
"""

from dataclasses import dataclass

from analyzers.glossary import query_words
from analyzers.identifiers import identifier_spellings, split_identifier
from analyzers.stemming import stem
from analyzers.stopwords import is_searchable, names_nothing
from analyzers.synonyms import SynonymTable
from analyzers.text import lower_chars, words

# A word: letters/digits/underscore, with inner `-` or `.` joining pieces (kebab ids, `0.1`).

SYNONYM_WEIGHT = 0.6
"""A synonym weighs less than the word typed, so `transfer` ranks literal transfers first."""
GLOSSARY_WEIGHT = 0.5
"""An app word a glossary expression stands for (`ether` -> `eth`) weighs less than a synonym:
it is a translation of everyday words, not the word typed (`analyzers.glossary`)."""


def _word_tokens(word: str) -> list[str]:
    parts = split_identifier(word)
    tokens = [s for p in parts if is_searchable(p) and is_searchable(s := stem(p))]
    if len(parts) > 1:
        whole = lower_chars(word)
        if len(whole) >= 2:
            tokens.insert(0, whole)
    return tokens


def analyze(text: str | None) -> list[str]:
    """Index tokens of a value: per word, the whole identifier (if compound) then its stemmed parts.

    Deduplicated in order: a field is a bag of distinct tokens.

    >>> analyze("Click coin-overview-send, then sending tokens")
    ['click', 'coin-overview-send', 'coin', 'overview', 'send', 'then', 'token']
    """
    if not text:
        return []
    out: dict[str, None] = {}
    for word in words(text):
        for token in _word_tokens(word):
            out.setdefault(token, None)
    return list(out)


def names_something(text: str) -> bool:
    """Whether a query holds a word worth searching for: one that is not a stopword, an asking
    word (`names_nothing`) or too short. A query of only such words, symbols or punctuation
    (`the and of`, `?!`, emoji) gives a search nothing to look for."""
    return any(
        is_searchable(part) and is_searchable(stem(part)) and not names_nothing(part)
        for word in words(text)
        for part in split_identifier(word)
    )


def _known_compound(words: list[str], index: int, table: SynonymTable) -> str | None:
    """Two query words that the synonym table knows as one word (`sign in` -> `signin`)."""
    if index + 1 >= len(words):
        return None
    compound = lower_chars(words[index] + words[index + 1])
    return compound if table.synonyms_of(stem(compound)) else None


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One index token to look for, its weight, and the query word (concept) it stands for."""

    token: str
    weight: float
    concept: str
    kind: str  # "exact" | "whole" | "spelling" | "synonym" | "glossary" | "typo" | "prefix"
    said: str = ""
    """The concept as the query typed it (`Send`, `coin-overview-send`, `seed words`): what an
    answer names when it says which concepts it found."""


def analyze_query(query: str, synonyms: SynonymTable | None = None) -> list[QueryTerm]:
    """Weighted terms of a query: each word's stem (1.0), a compound's whole identifier (1.0) and
    its other common spellings (1.0, kind "spelling", `identifier_spellings`), synonyms of
    each stem (`SYNONYM_WEIGHT`), and the app's words of the glossary expressions it holds
    (`GLOSSARY_WEIGHT`, kind "glossary"). The words of one expression (`seed words`) form one
    concept, named by the expression. A token keeps its highest weight per concept, and stands
    for every concept that yields it: in `turn my coins into stablecoins` both expressions mean
    `token`, and each is held where `token` is."""
    table = synonyms if synonyms is not None else SynonymTable()
    terms: dict[tuple[str, str], QueryTerm] = {}

    def add(term: QueryTerm) -> None:
        known = terms.get((term.token, term.concept))
        if known is None or known.weight < term.weight:
            terms[term.token, term.concept] = term

    typed = words(query)
    glossed = table.glossary.matches(query_words(query))
    expression_of = {i: m for m in glossed for i in range(m.start, m.end)}
    index = 0
    while index < len(typed):
        word = typed[index]
        match = expression_of.get(index)
        expression = match.expression if match else None
        said = " ".join(typed[match.start : match.end]) if match else word
        compound = _known_compound(typed, index, table)
        if compound is not None:  # "sign in" means "signin" (a synonym of unlock), not "sign"
            said = said if match else f"{word} {typed[index + 1]}"
            word = compound
            index += 1
        index += 1
        parts = split_identifier(word)
        if len(parts) > 1:
            whole = lower_chars(word)
            add(QueryTerm(whole, 1.0, expression or whole, "whole", said))
            for spelling in identifier_spellings(word)[1:]:
                add(QueryTerm(spelling, 1.0, expression or whole, "spelling", said))
        for part in parts:
            token = stem(part)
            if not (is_searchable(part) and is_searchable(token)):
                continue
            part_said = said if match or len(parts) == 1 else part
            add(QueryTerm(token, 1.0, expression or token, "exact", part_said))
            for syn in sorted(table.synonyms_of(token)):
                add(QueryTerm(syn, SYNONYM_WEIGHT, expression or token, "synonym", part_said))
    for match in glossed:
        said = " ".join(typed[match.start : match.end])
        for token in dict.fromkeys(t for means in match.means for t in analyze(means)):
            add(QueryTerm(token, GLOSSARY_WEIGHT, match.expression, "glossary", said))
    return list(terms.values())
