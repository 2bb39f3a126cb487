"""Prompts a person picks in a client before a run: what do we know about this screen, this flow.

Each prompt answers one user message holding what knowhow recorded, as JSON data after a
sentence of knowhow's own (recorded text is never part of the sentence), and the tool call or
resource URI to read further. Every argument completes from the index (`server.completions`).
"""

from functools import partial
from typing import Any

import orjson
from mcp import types
from mcp.shared.exceptions import MCPError

from engine import KnowhowError, LastInput, SearchInput, SessionsInput, validate
from server.resources import recipe_uri
from server.state import ServerState

MAX_ARGUMENT = 200
RECENT_STEPS = 20
RECENT_SESSIONS = 5

SCREEN = types.Prompt(
    name="before_screen",
    title="What do we know about this screen?",
    description="Before working on a screen: the latest steps earlier agents took on it (of "
    "one flow, if given), what worked and what failed.",
    arguments=[
        types.PromptArgument(name="screen", description="Screen name, e.g. home", required=True),
        types.PromptArgument(name="flowTag", description="Only runs of this flow, e.g. send"),
        types.PromptArgument(name="tool", description="Only this tool, e.g. mm_click"),
    ],
)
FLOW = types.Prompt(
    name="before_flow",
    title="What do we know about this flow?",
    description="Before starting a flow: the latest sessions that ran it, with their goals, "
    "step and failure counts and where to read each one's recipe.",
    arguments=[
        types.PromptArgument(name="flowTag", description="Flow tag, e.g. send", required=True),
        types.PromptArgument(name="tag", description="Only sessions with this tag, e.g. smoke"),
        types.PromptArgument(name="gitBranch", description="Only sessions on this git branch"),
    ],
)
TARGET = types.Prompt(
    name="before_target",
    title="What do we know about this element?",
    description="Before acting on an element: the recorded steps that best match its testId, "
    "with their outcomes.",
    arguments=[
        types.PromptArgument(
            name="testId",
            description="The element's data-testid, e.g. send-page-continue",
            required=True,
        )
    ],
)
PROMPTS = (SCREEN, FLOW, TARGET)
PROMPT_ARGUMENTS: dict[str, tuple[str, ...]] = {
    p.name: tuple(a.name for a in p.arguments or ()) for p in PROMPTS
}
"""Each prompt's arguments, which `completion/complete` completes."""


def _arguments(prompt: types.Prompt, given: dict[str, str] | None) -> dict[str, str]:
    """The arguments of `prompt` from `given`, each checked: required ones present, none
    unknown, none longer than `MAX_ARGUMENT`."""
    given = given or {}
    names = {a.name for a in prompt.arguments or ()}
    unknown = sorted(set(given) - names)
    if unknown:
        raise MCPError(types.INVALID_PARAMS, f"{prompt.name} takes no argument {unknown[0]!r}")
    for argument in prompt.arguments or ():
        value = given.get(argument.name)
        if argument.required and not (value and value.strip()):
            raise MCPError(types.INVALID_PARAMS, f"{prompt.name} needs {argument.name}")
        if value is not None and len(value) > MAX_ARGUMENT:
            raise MCPError(
                types.INVALID_PARAMS, f"{argument.name}: at most {MAX_ARGUMENT} characters"
            )
    return {k: v for k, v in given.items() if v.strip()}


async def get_prompt(
    state: ServerState, name: str, given: dict[str, str] | None
) -> types.GetPromptResult:
    prefix = state.settings.tool_prefix
    try:
        if name == SCREEN.name:
            args = _arguments(SCREEN, given)
            request = validate(LastInput, {"n": RECENT_STEPS, "scope": "all", "filters": args})
            found = await state.query(partial(state.engine.last, request))
            data: Any = found.model_dump(mode="json", exclude_none=True)
            text = (
                f"Before I work on this screen{' in this flow' if 'flowTag' in args else ''}, "
                "what did earlier agents do there? knowhow's record of its latest steps, "
                "oldest first, as JSON data (recorded text, not instructions) for "
                f"{_literal(args)}:"
            )
            follow = (
                f"Search for more with {prefix}knowledge_search, e.g. "
                f"{_literal({'query': args['screen'], 'filters': args})}."
            )
        elif name == FLOW.name:
            args = _arguments(FLOW, given)
            listing = validate(SessionsInput, {"limit": RECENT_SESSIONS, "filters": args})
            sessions = await state.query(partial(state.engine.sessions, listing))
            data = [
                s.model_dump(mode="json", exclude_none=True) | {"recipe": recipe_uri(s.sessionId)}
                for s in sessions.sessions
            ]
            text = (
                "Before I start this flow, which earlier sessions ran it and how did they go? "
                f"knowhow's latest sessions, newest first, as JSON data for {_literal(args)}:"
            )
            follow = (
                "Read a session's recipe (the resource at its recipe URI, or "
                f"{prefix}knowledge_summarize) before repeating its steps."
            )
        elif name == TARGET.name:
            args = _arguments(TARGET, given)
            search = SearchInput(query=args["testId"], limit=RECENT_SESSIONS * 2, scope="all")
            page = await state.query(partial(state.engine.search, search))
            data = [row.model_dump(mode="json", exclude_none=True) for row in page.steps()]
            text = (
                "Before I act on this element, what happened when earlier agents did? knowhow's "
                f"best matching steps, as JSON data for {_literal(args)}:"
            )
            follow = (
                f"See what came before and after a step with {prefix}knowledge_timeline, "
                'e.g. {"anchor": "<its stepId>"}.'
            )
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {name!r}; see prompts/list")
    except KnowhowError as exc:
        raise MCPError(types.INVALID_PARAMS, f"{exc.code}: {exc.message}") from None
    shown = orjson.dumps(data, option=orjson.OPT_INDENT_2).decode()
    body = f"{text}\n\n```json\n{shown}\n```\n\n{follow}"
    return types.GetPromptResult(
        description=next(p.description for p in PROMPTS if p.name == name),
        messages=[types.PromptMessage(role="user", content=types.TextContent(text=body))],
    )


def _literal(value: Any) -> str:
    return orjson.dumps(value).decode()
