"""Stopwords: SPEC-03 FR-3 English list plus the tool-prefix words `mm` and `mcp` (§8.1)."""

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
