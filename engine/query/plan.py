"""User text -> a boosted Tantivy query (never query syntax: every clause is built from tokens).

Each query word is a *concept*; its terms are the word's stem, a compound's whole identifier,
synonyms (weaker), typo corrections for words the index has never seen (weaker still) and
prefix completions (`auth` -> `authentication`, `coin-overview` -> `coin-overview-send`). Only
(field, term) pairs that exist in the index become clauses, each boosted by
`FIELD_BOOSTS[field] * term weight`; filters are MUST clauses, which Tantivy intersects cheaply.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

import tantivy

from analyzers import (
    QueryTerm,
    SynonymTable,
    analyze_query,
    asks_what_is_shown,
    carries_a_sentence,
    failures_named,
    is_sentence,
    names_a_failure,
    names_no_memory,
    places_named,
    split_identifier,
)
from engine.index import DOC_STEP, FIELD_BOOSTS
from engine.query.term_counts import TermCounts
from engine.query.vocabulary import TypoVocabulary
from engine.records import KNOWN_ACTIONS, tool_action

TYPO_WEIGHT = 0.5
PREFIX_WEIGHT = 0.4
MIN_PREFIX_CHARS = 3
MAX_PREFIX_TERMS = 8
MAX_TYPO_TERMS = 3
POSTING_BUDGET = 0.3
"""Postings a query may score, as a fraction of the documents (see `budget_clauses`)."""
MIN_POSTING_BUDGET = 20_000
SENTENCE_VERB_WEIGHT = 0.1
"""What a verb that carries a sentence (`get`, `make`, `done`: `analyzers.carries_a_sentence`)
weighs in the keyword leg when the query is a sentence (`analyzers.is_sentence`): searched (a
query of such words still finds something), but `how do I get back to the main wallet view`
no longer ranks the `get-started` button first, nor `… when I'm done` the `Done` button.
Measured on every query set in one run (`scripts/bench_quality.py`, docs/benchmarks.md): blind
+0.013, our outside-voice set +0.003, no set lower."""
PLACE_BOOST = 2.0
"""How much more the screen a step was done on counts for a word the query names as a place
(`analyzers.places_named`: `swap` of `the swap page`): a step on the swap screen answers it,
one that only led there (`coin-overview-swap` on the home screen) less. Measured on every set
in one run: public 0.905 -> 0.910 (its screen queries at the best baseline's 1.000), dev +0.007,
agent dev +0.006, no set lower."""


@dataclass(frozen=True, slots=True)
class Clause:
    field: str
    token: str
    boost: float
    concept: str


@dataclass(frozen=True, slots=True)
class Concept:
    """One concept of a query as an answer names it: what the query typed, and whether any
    step of the index can hold it."""

    said: str
    """As typed (`Send`, `coin-overview-send`, `seed words`)."""
    tokens: frozenset[str]
    """Every token standing for it (stem, spellings, synonyms, glossary words, typos, prefixes)."""
    identifier: bool
    """A compound identifier typed whole (`gas-station-toggle`)."""
    part_of: str | None
    """The identifier typed whole that this word is a part of (`send` of `coin-overview-send`)."""
    asks: bool
    """It names no particular memory (`how`, `my`, `of`, `up`, `get`, `page`:
    `analyzers.names_no_memory`): an answer is not missing anything when no step holds it."""
    indexed: bool
    """Some step of the index holds one of its tokens (a clause exists)."""
    read_as: str | None
    """The correction it is read as, when only typo corrections of it are in the index."""


@dataclass(frozen=True, slots=True)
class PlannedQuery:
    """The expanded terms (for evidence) and the (field, term) clauses that exist in the index."""

    terms: tuple[QueryTerm, ...]
    clauses: tuple[Clause, ...]
    """The clauses retrieval runs (within the posting budget)."""
    all_clauses: tuple[Clause, ...]
    """Every clause, to rescore the retrieved candidates exactly when some were left out."""
    tokens: frozenset[str]
    concept_tokens: tuple[frozenset[str], ...]
    """Per query word: every token that stands for it (stem, synonyms, typos, prefixes)."""
    whole_tokens: frozenset[str]
    """The compound identifiers typed whole (`coin-overview-send`), in each common spelling: a
    document holding one in any field is an exact match and ranks above every partial match."""
    concepts: tuple[Concept, ...] = ()
    """Per query word, in `concept_tokens` order: how an answer's coverage names it."""
    failures: tuple[str, ...] = ()
    """The failure kinds the query names (`analyzers.failures_named`): its failed steps of
    those kinds rank above the rest (`engine.search.step_search._tiers`)."""
    failed: bool = False
    """The query says something failed, whatever the error (`analyzers.names_a_failure`): its
    failed steps rank above the rest when it names no kind."""
    observing: bool = False
    """The query asks what a screen shows (`analyzers.asks_what_is_shown`): the rerank prefers
    the steps that observed a screen (`engine.search.step_search._rank_tier`)."""
    sentence: bool = False
    """The query reads as a sentence (`analyzers.is_sentence`): its carrying verbs weigh little
    here, and the fusion leans on meaning (`engine.meaning.fusion.semantic_weight`)."""

    def left_out_clauses(self) -> tuple[Clause, ...]:
        """The clauses retrieval does not run (`budget_clauses`): what the rerank window's
        exact rescore adds (`step_search._dropped_scores`)."""
        retrieved = set(self.clauses)
        return tuple(c for c in self.all_clauses if c not in retrieved)

    def exact_clauses(self) -> tuple[Clause, ...]:
        """Every (field, token) clause of a whole identifier the query typed."""
        return tuple(c for c in self.all_clauses if c.token in self.whole_tokens)


def _tool_names(base: list[QueryTerm]) -> set[str]:
    """The concepts that are a tool named as recorded (`mm_click`): the index holds tools
    without their prefix (`click`, `engine.records.tool_action`), which the query holds as the
    name's part; searched whole, the name would only complete to error codes
    (`mm_click_failed`) and rank the failures of that tool first."""
    return {
        term.concept
        for term in base
        if term.kind == "whole"
        and (action := tool_action(term.token)) in KNOWN_ACTIONS
        and term.token.endswith(f"_{action}")
    }


def _lighter(term: QueryTerm) -> QueryTerm:
    """`term` weighing `SENTENCE_VERB_WEIGHT` of what it did."""
    return replace(term, weight=term.weight * SENTENCE_VERB_WEIGHT)


def _typo_terms(vocabulary: TypoVocabulary, term: QueryTerm) -> list[QueryTerm]:
    """Known words within the allowed edit distance of a word the index has never seen."""
    return [
        QueryTerm(word, TYPO_WEIGHT * term.weight / distance, term.concept, "typo")
        for word, distance in vocabulary.corrections(term.token)[:MAX_TYPO_TERMS]
    ]


def _prefix_terms(counts: TermCounts, term: QueryTerm) -> list[QueryTerm]:
    if len(term.token) < MIN_PREFIX_CHARS:
        return []
    best = counts.completions(term.token)[:MAX_PREFIX_TERMS]
    return [QueryTerm(tok, PREFIX_WEIGHT * term.weight, term.concept, "prefix") for tok, _ in best]


def plan_query(
    counts: TermCounts,
    text: str,
    synonyms: SynonymTable,
    vocabulary: TypoVocabulary | None = None,
) -> PlannedQuery:
    """The query's terms and clauses; `counts`: the searcher's term counts (kept across
    searches of one searcher, `engine.query.term_counts`)."""
    searcher = counts.searcher
    base = analyze_query(text, synonyms)
    tools = _tool_names(base)
    base = [term for term in base if term.concept not in tools]
    sentence = is_sentence(text)
    if sentence:
        base = [_lighter(term) if carries_a_sentence(term.concept) else term for term in base]
    places = places_named(text)
    terms: dict[str, QueryTerm] = {}
    # Every term with its concept (`terms` keeps one concept per token, for the clauses):
    # what each concept stands for.
    every: list[QueryTerm] = []

    def add(term: QueryTerm) -> None:
        every.append(term)
        known = terms.get(term.token)
        if known is None or known.weight < term.weight:
            terms[term.token] = term

    for term in base:
        add(term)
    for term in base:
        if term.kind not in ("exact", "whole"):
            continue
        if not counts.doc_freqs(term.token):
            vocabulary = vocabulary or TypoVocabulary(searcher)
            for typo in _typo_terms(vocabulary, term):
                add(typo)
        for prefix in _prefix_terms(counts, term):
            add(prefix)
    candidates = []
    for term in terms.values():
        for field, df in counts.doc_freqs(term.token).items():
            boost = FIELD_BOOSTS[field] * term.weight
            if field == "screen" and (term.said or term.concept).lower() in places:
                boost *= PLACE_BOOST
            candidates.append((Clause(field, term.token, boost, term.concept), df))
    clauses = budget_clauses(candidates, searcher.num_docs)
    keys = dict.fromkeys(t.concept for t in base)
    concept_tokens = tuple(frozenset(t.token for t in every if t.concept == c) for c in keys)
    held = {c.token for c, _ in candidates}
    return PlannedQuery(
        tuple(terms.values()),
        tuple(clauses),
        tuple(c for c, _ in candidates),
        frozenset(terms),
        concept_tokens,
        frozenset(t.token for t in base if t.kind in ("whole", "spelling")),
        _concepts(base, every, keys, held),
        failures_named(text),
        names_a_failure(text),
        asks_what_is_shown(text),
        sentence,
    )


def _concepts(
    base: list[QueryTerm], terms: list[QueryTerm], keys: dict[str, None], held: set[str]
) -> tuple[Concept, ...]:
    """The concepts of `keys` (in order) as an answer names them; `held`: tokens with a clause."""
    said: dict[str, str] = {}
    for term in base:
        said.setdefault(term.concept, term.said or term.concept)
    wholes = {t.said: split_identifier(t.said) for t in base if t.kind == "whole"}
    concepts = []
    for key in keys:
        mine = [t for t in terms if t.concept == key]
        found = [t for t in mine if t.token in held]
        typos = [t.token for t in found if t.kind == "typo"]
        text = said[key]
        concepts.append(
            Concept(
                said=text,
                tokens=frozenset(t.token for t in mine),
                identifier=any(t.kind == "whole" for t in mine),
                part_of=next((w for w, parts in wholes.items() if text in parts), None),
                asks=names_no_memory(text),
                indexed=bool(found),
                read_as=typos[0] if typos and len(typos) == len(found) else None,
            )
        )
    return tuple(concepts)


def budget_clauses(candidates: list[tuple[Clause, int]], num_docs: int) -> list[Clause]:
    """Keep the clauses worth their cost: tantivy-py scores every posting of every clause (no
    top-k pruning), so a query costs about the sum of its clauses' document frequencies.

    Clauses are taken by value (boost x idf: what one match can add to BM25) while they fit in
    `POSTING_BUDGET x N` postings; a very common term in a low-weight field (say `button`
    among visible testIds) adds almost nothing (its idf is tiny) and is dropped first. Every
    query word keeps at least its most valuable clause, so nothing the user typed is ignored.
    The search then rescores the retrieved candidates with every clause: it adds what the
    left-out ones give them (`step_search._dropped_scores`).
    """
    if not candidates:
        return []
    budget = max(POSTING_BUDGET * num_docs, MIN_POSTING_BUDGET)

    def value(item: tuple[Clause, int]) -> float:
        clause, df = item
        return clause.boost * math.log(1 + (num_docs - df + 0.5) / (df + 0.5))

    ranked = sorted(candidates, key=lambda item: (-value(item), item[0].field, item[0].token))
    best_per_concept: dict[str, Clause] = {}
    for item in sorted(candidates, key=lambda item: -value(item)):
        best_per_concept.setdefault(item[0].concept, item[0])
    kept: list[Clause] = []
    spent = 0
    for clause, df in ranked:
        if spent + df <= budget or best_per_concept.get(clause.concept) is clause:
            kept.append(clause)
            spent += df
    return kept


def scored_query(schema: tantivy.Schema, clauses: Sequence[Clause]) -> tantivy.Query:
    if not clauses:
        return tantivy.Query.empty_query()
    return tantivy.Query.boolean_query(
        [
            (
                tantivy.Occur.Should,
                tantivy.Query.boost_query(
                    tantivy.Query.term_query(schema, c.field, c.token, index_option="freq"), c.boost
                ),
            )
            for c in clauses
        ]
    )


def holds_any(schema: tantivy.Schema, clauses: Sequence[Clause]) -> tantivy.Query:
    """Documents holding any of these (field, token) pairs (scored: wrap it to filter)."""
    return tantivy.Query.boolean_query(
        [
            (tantivy.Occur.Should, tantivy.Query.term_query(schema, c.field, c.token))
            for c in clauses
        ]
    )


def step_filter(schema: tantivy.Schema) -> tantivy.Query:
    return tantivy.Query.term_query(schema, "doc_type", DOC_STEP, index_option="basic")
