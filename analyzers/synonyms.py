"""Synonyms: groups of words that mean the same action (SPEC-03 §4.5), matched both ways.

A word expands to every other word of every group it belongs to, so expansion is symmetric
(`send` finds `transfer`, `transfer` finds `send`). Lookups are done on stems, the form the
index holds. Users extend the table with a JSON file: `{"groups": [["send", "transfer"], ...]}`,
which may also extend the one-way wallet glossary (`analyzers.glossary`):
`{"glossary": [{"says": ["ether"], "means": ["ETH"]}]}`. The table carries the glossary, so the
query side has one vocabulary object.
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import orjson

from analyzers.glossary import Glossary, default_glossary
from analyzers.stemming import stem
from analyzers.text import tokenize

# SPEC-03 ACTION_SYNONYMS, each canonical word with its synonyms as one group.
DEFAULT_SYNONYM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("send", "transfer", "pay"),
    ("receive", "deposit"),
    ("approve", "confirm", "accept", "allow"),
    ("reject", "deny", "cancel", "decline"),
    ("unlock", "login", "signin"),
    ("connect", "link", "authorize"),
    ("swap", "exchange", "trade"),
    ("sign", "signature"),
    # the browser tools' actions in the verbs of UI testing (Playwright's click / tap, fill /
    # type): `typing` is its own word to the stemmer, which keeps stems of 4 letters or more
    ("click", "press", "tap"),
    ("type", "typing", "typed", "fill"),
    ("navigate", "visit"),
)


def _build_index(groups: Iterable[Iterable[str]]) -> dict[str, frozenset[str]]:
    index: dict[str, set[str]] = {}
    for group in groups:
        stems = {stem(t) for word in group for t in tokenize(word)}
        for s in stems:
            index.setdefault(s, set()).update(stems)
    return {key: frozenset(values - {key}) for key, values in index.items()}


@dataclass(frozen=True)
class SynonymTable:
    """An immutable synonym table keyed by stem."""

    groups: tuple[tuple[str, ...], ...] = DEFAULT_SYNONYM_GROUPS
    glossary: Glossary = field(default_factory=default_glossary)
    _index: Mapping[str, frozenset[str]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", _build_index(self.groups))

    @classmethod
    def from_json(cls, data: bytes | str, *, include_defaults: bool = True) -> "SynonymTable":
        """Load `{"groups": [[word, ...], ...], "glossary": [{"says": [...], "means": [...]}]}`
        (either key may be missing); the defaults stay unless told otherwise."""
        parsed = orjson.loads(data)
        if not isinstance(parsed, dict) or not (
            isinstance(parsed.get("groups", []), list)
            and ("groups" in parsed or "glossary" in parsed)
        ):
            raise ValueError('synonyms file must look like {"groups": [["send", "transfer"]]}')
        groups: list[tuple[str, ...]] = []
        for group in parsed.get("groups", []):
            if not isinstance(group, list) or not all(isinstance(w, str) for w in group):
                raise ValueError(f"synonym group must be a list of words, got {group!r}")
            groups.append(tuple(group))
        base = DEFAULT_SYNONYM_GROUPS if include_defaults else ()
        glossary = Glossary.from_entries(
            parsed.get("glossary", []), include_defaults=include_defaults
        )
        return cls(groups=base + tuple(groups), glossary=glossary)

    def synonyms_of(self, token: str) -> frozenset[str]:
        """Stems that mean the same as the stem `token` (never `token` itself)."""
        return self._index.get(token, frozenset())


def expand_with_synonyms(tokens: Iterable[str], table: SynonymTable | None = None) -> list[str]:
    """SPEC-03 `expandWithSynonyms` on plain words: the input tokens first, then their synonyms.

    Works on surface words (`transfer` -> `send`, `pay`); deduplicated, input order kept.
    """
    table = table or SynonymTable()
    words = list(dict.fromkeys(tokens))
    out: dict[str, None] = dict.fromkeys(words)
    surface = {stem(w): w for group in table.groups for w in group}
    for word in words:
        for syn in sorted(table.synonyms_of(stem(word))):
            out.setdefault(surface.get(syn, syn), None)
    return list(out)
