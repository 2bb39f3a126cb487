"""The Tantivy schema and the one boost table.

One index holds two document types (`doc_type`): a document per step, carrying its session's
searchable metadata so that session and step evidence are scored by one query, and a document
per session for listing. Scored fields hold tokens produced by `analyzers.analyze`, joined by
spaces, in fields using Tantivy's built-in `whitespace` tokenizer (Python analyzers cannot run
inside tantivy-py, and custom tokenizers are not saved with an index). Filter fields are `raw`.
"""

from dataclasses import dataclass

import tantivy

SCHEMA_VERSION = 19
"""Bump on any change to fields or analysis; a mismatching index is refused until rebuilt."""


@dataclass(frozen=True, slots=True)
class ScoredField:
    boost: float
    session: bool = False
    """Session metadata, carried by every step document of the session."""
    coverage: bool = True
    """Counts for the reranker's query-word coverage (`documents.rank_record`)."""
    typos: bool = True
    """Holds words people type, so its words are typo-correction targets (`vocabulary`)."""


# The one table of scored fields; every list of them below is derived from it.
# Boosts start from SPEC-03's weights (tool 10, screen 8, target 6, labels 5, visible 3, a11y 2;
# flowTags 12, goal 6, tags 4, branch 2). Ours: `route` (words of the URL the action was taken
# on), `target_name` (role and visible name of the target: what people call it), `landed`
# (screen and route after the action: observations are taken after it), `error` (error code,
# message and what people call it: `analyzers.errors`) and `notice` (what alerts and status
# messages said: validation errors live there).
# `screen` is the screen acted on. Visible testIds are ids, not the step's own words: neither
# coverage nor typos; the error counts for coverage separately (a query about the failure).
FIELDS: dict[str, ScoredField] = {
    "tool": ScoredField(10.0),
    "screen": ScoredField(8.0),
    "target": ScoredField(8.0),
    "target_name": ScoredField(12.0),
    "labels": ScoredField(5.0),
    "visible": ScoredField(3.0, coverage=False, typos=False),
    "a11y": ScoredField(2.0),
    "route": ScoredField(3.0, typos=False),
    "landed": ScoredField(2.0, coverage=False, typos=False),
    "error": ScoredField(6.0, coverage=False),
    "notice": ScoredField(5.0),
    "flow": ScoredField(12.0, session=True),
    "goal": ScoredField(6.0, session=True),
    "tags": ScoredField(4.0, session=True),
    "branch": ScoredField(2.0, session=True, typos=False),
}
FIELD_BOOSTS = {name: spec.boost for name, spec in FIELDS.items()}
STEP_FIELDS = tuple(name for name, spec in FIELDS.items() if not spec.session)
SESSION_FIELDS = tuple(name for name, spec in FIELDS.items() if spec.session)
SCORED_FIELDS = STEP_FIELDS + SESSION_FIELDS
COVERAGE_FIELDS = tuple(name for name, spec in FIELDS.items() if spec.coverage)
TYPO_FIELDS = tuple(name for name, spec in FIELDS.items() if spec.typos)

# Exact-match filter fields (raw tokenizer, lowercased values).
RAW_FIELDS = (
    "doc_type",
    "step_id",
    "session_id",
    "tool_name",
    "screen_name",
    "flow_tag",
    "tag",
    "branch_name",
    "state_mode",
    "fixture_preset",
    "context",
    "ok",
    "target_id",
    "superseded",
    "recalled",
    "memory_type",
    "sem_step",
    "sem_screen",
    "sem_session",
)
ADDED_RAW_FIELDS = ("failure", "danger")
"""Exact-match fields added since: the kinds of a step's error (`analyzers.failure_kinds`), and
`destructive` for a step whose action destroys something (`engine.records.danger`).
Built after every other field, so that each older field keeps its field number: an engine of an
older schema can search this one's index (`scripts/bench_search_ab.py` pairs the two)."""
SEMANTIC_KEY_FIELDS = ("sem_step", "sem_screen", "sem_session")
"""Keys of a step's texts in the generation's vector store (`engine.embedding.vectors`), per memory
type."""
KEY_COLUMNS = {"step": "sem_step_u64", "screen": "sem_screen_u64"}
"""The keys of the texts the semantic score blends (per memory type) again, as u64 fast fields
(`engine.embedding.vectors.key_number`): a search scores its hundreds of candidates from these
columns (`Searcher.fast_field_values`, one call) instead of reading each one's stored document."""
# Integer fast fields: times in epoch milliseconds, step order inside a session.
INT_FIELDS = ("ts", "created", "seq")

DOC_STEP = "step"
DESTRUCTIVE = "destructive"
"""The `danger` value of a step whose action destroys something."""
DOC_SESSION = "session"


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in RAW_FIELDS:
        builder.add_text_field(
            name,
            stored=name
            in ("step_id", "session_id", "recalled", "memory_type", *SEMANTIC_KEY_FIELDS),
            tokenizer_name="raw",
            index_option="basic",
        )
    for name in SCORED_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="whitespace", index_option="freq")
    for name in INT_FIELDS:
        builder.add_integer_field(name, stored=True, indexed=True, fast=True)
    for name in KEY_COLUMNS.values():
        builder.add_unsigned_field(name, fast=True)
    builder.add_bytes_field("payload", stored=True)  # what a result shows (JSON)
    builder.add_bytes_field("rank", stored=True)  # what the reranker reads (see documents.py)
    for name in ADDED_RAW_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="raw", index_option="basic")
    return builder.build()
