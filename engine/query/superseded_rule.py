"""What a result says about a step's life: superseded or not, and the filter every path shares.

A superseded step (see `engine.records.supersede`, `engine.index.supersede_decisions`) is hidden
from every retrieval path unless the caller asks for it: search (every mode), last, priorKnowledge,
duplicates and clusters. One filter for all of them, so that no second path forgets it:

    clauses.append(hide_superseded(schema))                    # a Tantivy boolean clause
    if not include and is_superseded(payload): skip            # when filtering payloads

With `includeSuperseded: true` the results carry `superseded_fields(payload)`:
`isSuperseded`, `supersededBy {stepId, target, timestamp}` and `supersededAt`.
"""

from typing import Any

import tantivy

from engine.index import StepPayload

SUPERSEDED_FIELD = "superseded"
"""Raw index field: `true` on superseded step documents, `false` on the others."""


def hide_superseded(schema: tantivy.Schema) -> tuple[tantivy.Occur, tantivy.Query]:
    """A boolean clause that drops superseded steps (add it unless includeSuperseded)."""
    flagged = tantivy.Query.term_query(schema, SUPERSEDED_FIELD, "true", index_option="basic")
    return (tantivy.Occur.MustNot, flagged)


def current_steps(schema: tantivy.Schema) -> tantivy.Query:
    """The same filter as a query that must match (for paths that AND their filters)."""
    return tantivy.Query.term_query(schema, SUPERSEDED_FIELD, "false", index_option="basic")


def is_superseded(payload: StepPayload) -> bool:
    """Whether a step document's payload carries a supersede decision."""
    return "supersededAt" in payload


def superseded_fields(payload: StepPayload) -> dict[str, Any]:
    """`isSuperseded`, and when it is, `supersededBy` and `supersededAt` (result fields)."""
    if not is_superseded(payload):
        return {"isSuperseded": False}
    fields: dict[str, Any] = {"isSuperseded": True, "supersededAt": payload["supersededAt"]}
    if payload.get("supersededBy"):
        fields["supersededBy"] = payload["supersededBy"]
    if payload.get("supersededReason"):
        fields["supersededReason"] = payload["supersededReason"]
    return fields
