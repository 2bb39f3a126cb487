"""What every read of the index shares: the query a user's text becomes (planned from
the vocabulary and the term counts of the searcher), the filters and the superseded rule every
path applies, the stored documents kept per commit, and a hit turned into a result row (its
evidence, salience and source session). Imports the layers up to `engine.index`; never
`engine.live`.
"""

from engine.query.coverage import (
    NO_WORDS,
    by_meaning,
    confidence,
    counted,
    coverage_hint,
    held_anywhere,
    identifier_mask,
    search_coverage,
)
from engine.query.doc_store_cache import StoredDocs
from engine.query.evidence import QueryWords, describe_target, match_evidence
from engine.query.filters import (
    FilterClauses,
    ReadView,
    epoch_ms_of,
    filter_clauses,
    scope_session,
    search_filters,
    step_clauses,
)
from engine.query.plan import Clause, PlannedQuery, holds_any, plan_query, scored_query, step_filter
from engine.query.result_rows import step_row
from engine.query.salience import NO_RECALLS, SALIENCE_WEIGHT, lifted, recalls, salience_of
from engine.query.session_sources import SessionSources, source_sessions
from engine.query.superseded_rule import (
    SUPERSEDED_FIELD,
    current_steps,
    hide_superseded,
    is_superseded,
)
from engine.query.term_counts import TermCounts
from engine.query.vocabulary import TypoVocabulary

__all__ = [
    "NO_RECALLS",
    "NO_WORDS",
    "SALIENCE_WEIGHT",
    "SUPERSEDED_FIELD",
    "Clause",
    "FilterClauses",
    "PlannedQuery",
    "QueryWords",
    "ReadView",
    "SessionSources",
    "StoredDocs",
    "TermCounts",
    "TypoVocabulary",
    "by_meaning",
    "confidence",
    "counted",
    "coverage_hint",
    "current_steps",
    "describe_target",
    "epoch_ms_of",
    "filter_clauses",
    "held_anywhere",
    "hide_superseded",
    "holds_any",
    "identifier_mask",
    "is_superseded",
    "lifted",
    "match_evidence",
    "plan_query",
    "recalls",
    "salience_of",
    "scope_session",
    "scored_query",
    "search_coverage",
    "search_filters",
    "source_sessions",
    "step_clauses",
    "step_filter",
    "step_row",
]
