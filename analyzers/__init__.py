"""Pure text analysis for knowhow: no I/O, no tantivy, no imports from the rest of knowhow.

Index side and query side share one pipeline (`analyze`), so a token written into the index is
exactly the token a query looks for.
"""

from analyzers.analyze import QueryTerm, analyze, analyze_query, names_something
from analyzers.errors import (
    FAILURES,
    error_words,
    failure_kinds,
    failures_named,
    names_a_failure,
    plain_failures,
)
from analyzers.forms import asks_for_a_check, asks_what_is_shown, is_sentence, places_named
from analyzers.glossary import Glossary, GlossMatch, default_glossary, glossed
from analyzers.identifiers import split_identifier, tokenize_identifier
from analyzers.stemming import stem
from analyzers.stopwords import (
    MIN_TOKEN_LENGTH,
    STOPWORDS,
    carries_a_sentence,
    names_no_memory,
    names_nothing,
)
from analyzers.synonyms import DEFAULT_SYNONYM_GROUPS, SynonymTable, expand_with_synonyms
from analyzers.text import tokenize
from analyzers.typos import edit_distance, max_typo_edits
from analyzers.verbs import is_verb

__all__ = [
    "DEFAULT_SYNONYM_GROUPS",
    "FAILURES",
    "MIN_TOKEN_LENGTH",
    "STOPWORDS",
    "GlossMatch",
    "Glossary",
    "QueryTerm",
    "SynonymTable",
    "analyze",
    "analyze_query",
    "asks_for_a_check",
    "asks_what_is_shown",
    "carries_a_sentence",
    "default_glossary",
    "edit_distance",
    "error_words",
    "expand_with_synonyms",
    "failure_kinds",
    "failures_named",
    "glossed",
    "is_sentence",
    "is_verb",
    "max_typo_edits",
    "names_a_failure",
    "names_no_memory",
    "names_nothing",
    "names_something",
    "places_named",
    "plain_failures",
    "split_identifier",
    "stem",
    "tokenize",
    "tokenize_identifier",
]
