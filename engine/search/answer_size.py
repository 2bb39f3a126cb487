"""A page of search results bounded by size as well as by count.

A result that is a `run_steps` batch lists its actions, up to 100 each, so a page of 100 such
results was megabytes (`limit` bounds results, not what each holds). So a result lists at most
`RESULT_BATCH_ACTIONS` of its batch's actions — those its `matchedFields` name first, then the
first ones, in batch order — and says how many the batch holds (`batchCount`) when it lists
fewer; and a page ends before the result that would take it past `PAGE_BYTES` (it always holds
one), its `nextOffset` saying where the next page starts.
"""

import re

import orjson

from engine.core import BatchAction, StepSummary

RESULT_BATCH_ACTIONS = 10
"""Actions of a batch a search result lists at most (summarize a session for all of them)."""
PAGE_BYTES = 256_000
"""Bytes of results (as JSON) a page of search results holds at most, besides its first."""
MATCHED_ACTION = re.compile(r"^batch\[(\d+)\]")


def bounded_results(results: list[StepSummary]) -> list[StepSummary]:
    """The results that fit `PAGE_BYTES`, in order, each with its batch cut down."""
    kept: list[StepSummary] = []
    room = PAGE_BYTES
    for result in results:
        row = _with_fewer_actions(result)
        room -= len(orjson.dumps(row.to_json_dict()))
        if kept and room < 0:
            break
        kept.append(row)
    return kept


def _with_fewer_actions(result: StepSummary) -> StepSummary:
    if result.batch is None or len(result.batch) <= RESULT_BATCH_ACTIONS:
        return result
    matched = {
        int(m[1]) for field in result.matchedFields or [] if (m := MATCHED_ACTION.match(field))
    }
    first: list[BatchAction] = [a for a in result.batch if a.index in matched]
    rest = [a for a in result.batch if a.index not in matched]
    listed = {a.index for a in [*first, *rest][:RESULT_BATCH_ACTIONS]}
    shown = [a for a in result.batch if a.index in listed]
    return result.model_copy(update={"batch": shown, "batchCount": len(result.batch)})
