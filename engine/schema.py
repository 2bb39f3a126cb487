"""The Tantivy schema and the one boost table.

One index holds two document types (`doc_type`): a document per step, carrying its session's
searchable metadata so that session and step evidence are scored by one query, and a document
per session for listing. Scored fields hold tokens produced by `analyzers.analyze`, joined by
spaces, in fields using Tantivy's built-in `whitespace` tokenizer (Python analyzers cannot run
inside tantivy-py, and custom tokenizers are not saved with an index). Filter fields are `raw`.
"""

import tantivy

SCHEMA_VERSION = 13
"""Bump on any change to fields or analysis; a mismatching index is refused until rebuilt."""

# Scored fields and their boosts. Start: SPEC-03's weights (tool 10, screen 8, target 6,
# labels 5, visible 3, a11y 2; flowTags 12, goal 6, tags 4, branch 2). Ours: `route` (words of the
# URL the action was taken on), `target_name` (role and visible name of the target: what people
# call it), `landed` (screen and route after the action: observations are
# taken after it), `error` (error code and message) and `notice` (what alerts and status
# messages said: validation errors live there). `screen` is the screen acted on.
FIELD_BOOSTS: dict[str, float] = {
    "tool": 10.0,
    "screen": 8.0,
    "target": 8.0,
    "target_name": 12.0,
    "labels": 5.0,
    "visible": 3.0,
    "a11y": 2.0,
    "route": 3.0,
    "landed": 2.0,
    "error": 6.0,
    "notice": 5.0,
    "flow": 12.0,
    "goal": 6.0,
    "tags": 4.0,
    "branch": 2.0,
}
STEP_FIELDS = (
    "tool",
    "screen",
    "target",
    "target_name",
    "labels",
    "visible",
    "a11y",
    "route",
    "landed",
    "error",
    "notice",
)
SESSION_FIELDS = ("flow", "goal", "tags", "branch")
SCORED_FIELDS = STEP_FIELDS + SESSION_FIELDS

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
    "ok",
    "target_id",
    "superseded",
    "recalled",
)
# Integer fast fields: times in epoch milliseconds, step order inside a session.
INT_FIELDS = ("ts", "created", "seq")

DOC_STEP = "step"
DOC_SESSION = "session"


def build_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    for name in RAW_FIELDS:
        builder.add_text_field(
            name,
            stored=name in ("step_id", "session_id", "recalled"),
            tokenizer_name="raw",
            index_option="basic",
        )
    for name in SCORED_FIELDS:
        builder.add_text_field(name, stored=False, tokenizer_name="whitespace", index_option="freq")
    for name in INT_FIELDS:
        builder.add_integer_field(name, stored=True, indexed=True, fast=True)
    builder.add_bytes_field("payload", stored=True)  # what a result shows (JSON)
    builder.add_bytes_field("rank", stored=True)  # what the reranker reads (see documents.py)
    return builder.build()
