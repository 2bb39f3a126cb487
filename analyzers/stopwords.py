"""Stopwords: SPEC-03 FR-3 English list plus the tool-prefix words `mm` and `mcp` (§8.1); and
the words that only shape a question, which an answer's coverage leaves out."""

MIN_TOKEN_LENGTH = 2

STOPWORDS: frozenset[str] = frozenset(
    {
        "a",
        "an",
        "the",
        "to",
        "from",
        "in",
        "on",
        "at",
        "for",
        "with",
        "and",
        "or",
        "but",
        "is",
        "are",
        "was",
        "were",
        "be",
        "been",
        "flow",
        "test",
        "should",
        "can",
        "will",
        "do",
        "does",
        "did",
        "have",
        "has",
        "had",
        "this",
        "that",
        "these",
        "those",
        "it",
        "mm",
        "mcp",
    }
)


def is_searchable(token: str) -> bool:
    """A token worth indexing or querying: long enough and not a stopword."""
    return len(token) >= MIN_TOKEN_LENGTH and token not in STOPWORDS


ASKING_WORDS: frozenset[str] = frozenset(
    {
        *("how", "why", "what", "which", "where", "when", "who", "whom", "whose"),
        *("i", "me", "my", "mine", "myself", "we", "us", "our", "ours", "you", "your", "yours"),
        *("he", "him", "his", "she", "her", "hers", "they", "them", "their", "its"),
        *("of", "by", "about", "there", "here", "so", "if", "then", "than", "just", "please"),
        *("some", "any", "also", "very", "really", "anymore", "still", "again", "ever"),
        *("would", "could", "shall", "may", "might", "must", "am", "being"),
        # what is left of a contraction once its apostrophe splits it (`don't` -> `don`)
        *("don", "doesn", "didn", "isn", "aren", "wasn", "weren", "won", "wouldn", "couldn"),
        *("shouldn", "haven", "hasn", "hadn", "cannot"),
    }
)
"""Words that shape a question or a sentence (`how`, `why`, `my`, `of`, what is left of
`don't`) but name nothing a recorded step could hold: a query's answer is not missing anything
when no step mentions them. They are searched like any word (a step may hold one); an answer's
coverage leaves them out (`names_nothing`)."""


def names_nothing(word: str) -> bool:
    """Whether a query word only shapes the sentence: a stopword or an asking word."""
    lowered = word.lower()
    return lowered in STOPWORDS or lowered in ASKING_WORDS
