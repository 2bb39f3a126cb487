"""`completion/complete`: the values the index knows for an argument, the most frequent first.

Every argument of a resource template (`server.resources`) or prompt (`server.prompts`) whose
values the index holds completes from them: session ids, screens, flowTags, tags, tools, git
branches, testIds, a session's steps. One walk of the term dictionary of the argument's
exact-match field (`KnowledgeEngine.term_counts`), bounded to `MAX_VALUES`. What knowhow does
not offer (another template or prompt, an argument it does not have, a prefix longer than any
value can be) completes to an empty list, not an error: a client asks as a person types.
"""

from functools import partial

from mcp import types

from engine import InvalidInput, holds_unsafe_chars, validate_session_id
from server.prompts import PROMPT_ARGUMENTS
from server.resources import TEMPLATE_ARGUMENTS
from server.state import ServerState

MAX_VALUES = 100
"""What MCP allows in one completion."""
MAX_PREFIX = 128
"""No recorded value the completion offers is longer (a session id is at most 128)."""
MAX_VALUE = 200

FIELDS = {
    "sessionId": "session_id",
    "step": "step_id",
    "screen": "screen_name",
    "flowTag": "flow_tag",
    "tag": "tag",
    "tool": "tool_name",
    "gitBranch": "branch_name",
    "testId": "target_id",
}
"""The index field (`engine.index.schema.RAW_FIELDS`) holding each argument's values."""
AS_RECORDED = {"session_id", "step_id"}
"""Fields holding values as recorded; the others hold them lowercased."""

NOTHING = types.CompleteResult(completion=types.Completion(values=[], total=0, has_more=False))


def arguments_of(ref: types.ResourceTemplateReference | types.PromptReference) -> tuple[str, ...]:
    """The arguments of a template or prompt knowhow offers; () for any other."""
    if isinstance(ref, types.PromptReference):
        return PROMPT_ARGUMENTS.get(ref.name, ())
    return TEMPLATE_ARGUMENTS.get(ref.uri, ())


async def complete(state: ServerState, params: types.CompleteRequestParams) -> types.CompleteResult:
    name, typed = params.argument.name, params.argument.value
    field = FIELDS.get(name)
    if field is None or name not in arguments_of(params.ref) or len(typed) > MAX_PREFIX:
        return NOTHING
    strip = ""
    if name == "step":  # a step of the session already chosen: ids are "<sessionId>/<step>"
        chosen = (params.context.arguments if params.context else None) or {}
        try:
            strip = validate_session_id(chosen.get("sessionId")) + "/"
        except InvalidInput:
            return NOTHING
    prefix = strip + (typed if field in AS_RECORDED else typed.lower())
    counted = await state.query(partial(state.engine.term_counts, field, prefix, MAX_VALUES + 1))
    more = len(counted) > MAX_VALUES
    values = [value[len(strip) :] for value, _ in counted[:MAX_VALUES] if _offered(value)]
    return types.CompleteResult(
        completion=types.Completion(
            values=values, total=None if more else len(values), has_more=more
        )
    )


def _offered(value: str) -> bool:
    """A recorded value fit to show as it is: no control or bidirectional formatting characters
    (`engine.core.holds_unsafe_chars`), of a sensible length, not
    the index's placeholder for a missing value."""
    return 0 < len(value) <= MAX_VALUE and value != "unknown" and not holds_unsafe_chars(value)
