"""Recorded knowledge as MCP resources: the root's status, each session, its recipe, a step.

The URI scheme (docs/mcp.md):

    knowhow://status                                  the index's health (knowledge_status)
    knowhow://sessions/{sessionId}                    a session as the index lists it
    knowhow://sessions/{sessionId}/recipe{?offset}    its recipe, a page of steps at a time
    knowhow://steps/{sessionId}/{step}                one step and where it came from

`resources/list` pages through the status and every session, newest first, with an opaque
cursor. A read answers two contents of the same thing: JSON (`application/json`) for a
program, and an outline (`text/markdown`) for a person. A URI is parsed strictly before
anything is read: no percent-encoding, no dot segments, no backslash, ids by the same rules as
the tools' (`engine.core.files`), so nothing outside the knowledge root can be named; a session
of another root is simply not found in this one.
"""

import base64
import binascii
import re
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
from mcp import types
from mcp.shared.exceptions import MCPError

from engine import (
    InvalidInput,
    KnowhowError,
    NotFound,
    Result,
    StepInput,
    SummarizeInput,
    TimelineInput,
    validate,
    validate_session_id,
    validate_step_id,
)
from server.outline import outline
from server.state import ServerState

SCHEME = "knowhow://"
STATUS_URI = f"{SCHEME}status"
SESSION_TEMPLATE = f"{SCHEME}sessions/{{sessionId}}"
RECIPE_TEMPLATE = f"{SCHEME}sessions/{{sessionId}}/recipe{{?offset}}"
STEP_TEMPLATE = f"{SCHEME}steps/{{sessionId}}/{{step}}"
JSON = "application/json"
TEXT = "text/markdown"
LIST_PAGE = 100
"""Sessions per `resources/list` page."""
MAX_URI = 600
"""Longer than any URI of the scheme (two ids of at most 128 and 330 characters)."""
RESOURCE_NOT_FOUND = -32002
"""The code MCP gives a resource that does not exist."""

TEMPLATES = (
    types.ResourceTemplate(
        uri_template=SESSION_TEMPLATE,
        name="session",
        title="Recorded session",
        description="A session as the index lists it: goal, flowTags, tags, git branch, step "
        "and failure counts. Its recipe is at .../recipe.",
        mime_type=JSON,
    ),
    types.ResourceTemplate(
        uri_template=RECIPE_TEMPLATE,
        name="recipe",
        title="Session recipe",
        description="How a session went: screens visited, actions that worked, failures and "
        "how they were recovered; a long session a page of 200 steps at a time (offset, "
        "nextOffset), as knowledge_summarize answers it.",
        mime_type=JSON,
    ),
    types.ResourceTemplate(
        uri_template=STEP_TEMPLATE,
        name="step",
        title="Recorded step",
        description="One step (tool, screen, target, outcome) and the session it came from, "
        "with the later sessions that followed it.",
        mime_type=JSON,
    ),
)
TEMPLATE_ARGUMENTS: dict[str, tuple[str, ...]] = {
    SESSION_TEMPLATE: ("sessionId",),
    RECIPE_TEMPLATE: ("sessionId", "offset"),
    STEP_TEMPLATE: ("sessionId", "step"),
}
"""Each template's arguments, which `completion/complete` completes (`server.completions`)."""

_OFFSET = re.compile(r"offset=(\d{1,9})")


@dataclass(frozen=True)
class Address:
    """What a URI names: `kind` is status, session, recipe or step."""

    kind: str
    session_id: str = ""
    step_id: str = ""
    offset: int = 0


def bad_uri(uri: str, why: str) -> MCPError:
    shown = uri if len(uri) <= 80 else uri[:80] + "…"
    return MCPError(
        types.INVALID_PARAMS,
        f"resource URI {shown!r}: {why}; knowhow's resources are {STATUS_URI}, "
        f"{SESSION_TEMPLATE}, {RECIPE_TEMPLATE} and {STEP_TEMPLATE}",
    )


def parse(uri: str) -> Address:
    """The address a URI names, or an `INVALID_PARAMS` error saying what is wrong with it
    (`RESOURCE_NOT_FOUND` for a well-formed URI of another shape)."""
    if len(uri) > MAX_URI:
        raise bad_uri(uri, f"longer than {MAX_URI} characters")
    if not uri.startswith(SCHEME):
        raise MCPError(RESOURCE_NOT_FOUND, f"no resource {uri[:80]!r}: not a {SCHEME} URI")
    if any(c in uri for c in "%\\#") or any(ord(c) < 33 or ord(c) == 127 for c in uri):
        raise bad_uri(uri, "percent-encoding, backslashes, fragments and spaces are not allowed")
    path, _, query = uri[len(SCHEME) :].partition("?")
    parts = path.split("/")
    if any(p in ("", ".", "..") for p in parts):
        raise bad_uri(uri, "empty or dot segments are not allowed")
    try:
        return _address(parts, query)
    except InvalidInput as exc:
        raise bad_uri(uri, exc.message) from None
    except LookupError:
        raise MCPError(RESOURCE_NOT_FOUND, f"no resource {uri[:120]!r}") from None


def _address(parts: list[str], query: str) -> Address:
    match parts:
        case ["status"] if not query:
            return Address("status")
        case ["sessions", session_id] if not query:
            return Address("session", session_id=validate_session_id(session_id))
        case ["sessions", session_id, "recipe"]:
            return Address(
                "recipe", session_id=validate_session_id(session_id), offset=_offset(query)
            )
        case ["steps", session_id, step] if not query:
            step_id = validate_step_id(f"{session_id}/{step}")
            return Address("step", session_id=session_id, step_id=step_id)
    raise LookupError


def _offset(query: str) -> int:
    if not query:
        return 0
    match = _OFFSET.fullmatch(query)
    if match is None:
        raise InvalidInput("offset", "the only query is ?offset=N, N a step number")
    return int(match[1])


def session_uri(session_id: str) -> str:
    return f"{SCHEME}sessions/{session_id}"


def recipe_uri(session_id: str, offset: int = 0) -> str:
    page = f"?offset={offset}" if offset else ""
    return f"{SCHEME}sessions/{session_id}/recipe{page}"


def encode_cursor(offset: int) -> str:
    return base64.urlsafe_b64encode(f"sessions:{offset}".encode()).decode()


def decode_cursor(cursor: str | None) -> int:
    """The offset a cursor of ours stands for; anything else is `INVALID_PARAMS`."""
    if cursor is None:
        return 0
    try:
        kind, _, number = base64.urlsafe_b64decode(cursor.encode()).decode().partition(":")
        if kind == "sessions" and number.isdigit() and len(number) <= 9:
            return int(number)
    except (binascii.Error, UnicodeError, ValueError):
        pass
    raise MCPError(types.INVALID_PARAMS, "cursor: not one this server gave; list from the start")


async def list_resources(state: ServerState, cursor: str | None) -> types.ListResourcesResult:
    """The status (on the first page) and the sessions, newest first, `LIST_PAGE` a page."""
    offset = decode_cursor(cursor)
    page = await state.query(partial(state.engine.session_page, offset, LIST_PAGE))
    resources = []
    if offset == 0:
        resources.append(
            types.Resource(
                uri=STATUS_URI,
                name="status",
                title="Knowledge index status",
                description="Documents indexed, sessions, files skipped and why, index lag.",
                mime_type=JSON,
            )
        )
    for s in page.sessions:
        resources.append(
            types.Resource(
                uri=session_uri(s.sessionId),
                name=s.sessionId,
                title=f"Session {s.sessionId}",
                description=_session_description(s.goal, s.flowTags, s.stepCount),
                mime_type=JSON,
            )
        )
    following = offset + len(page.sessions)
    more = following < page.total and bool(page.sessions)
    return types.ListResourcesResult(
        resources=resources, next_cursor=encode_cursor(following) if more else None
    )


def _session_description(goal: str | None, flow_tags: list[str], steps: int) -> str:
    """Recorded text quoted as data (a JSON literal), knowhow's words around it."""
    parts = [f"{steps} steps"]
    if goal:
        parts.append(f"goal {orjson.dumps(goal[:200]).decode()}")
    if flow_tags:
        parts.append(f"flowTags {orjson.dumps(flow_tags[:10]).decode()}")
    return "; ".join(parts)


async def read_resource(state: ServerState, uri: str) -> types.ReadResourceResult:
    """Both contents of the resource `uri` names; a bad URI or a missing session is an MCP
    error saying so."""
    address = parse(uri)
    try:
        title, body = await _read(state, address)
    except NotFound as exc:
        raise MCPError(RESOURCE_NOT_FOUND, f"no resource {uri!r}: {exc.message}") from None
    except InvalidInput as exc:
        raise bad_uri(uri, exc.message) from None
    except KnowhowError as exc:
        raise MCPError(types.INTERNAL_ERROR, f"{exc.code}: {exc.message}") from None
    return types.ReadResourceResult(
        contents=[
            types.TextResourceContents(uri=uri, mime_type=JSON, text=orjson.dumps(body).decode()),
            types.TextResourceContents(uri=uri, mime_type=TEXT, text=outline(title, body)),
        ]
    )


async def _read(state: ServerState, address: Address) -> tuple[str, dict[str, Any]]:
    engine = state.engine
    match address.kind:
        case "status":
            return "# Knowledge index status", _dump(await state.status())
        case "session":
            found = await state.query(partial(engine.session, address.session_id))
            if found is None:
                raise NotFound("the index holds no such session (yet)")
            body = _dump(found) | {"recipe": recipe_uri(address.session_id)}
            return f"# Session {address.session_id}", body
        case "recipe":
            scope = {"sessionId": address.session_id}
            request = validate(SummarizeInput, {"scope": scope, "offset": address.offset})
            recipe = await state.query(partial(engine.summarize, request))
            body = _dump(recipe)
            if recipe.nextOffset is not None:
                body["next"] = recipe_uri(address.session_id, recipe.nextOffset)
            return f"# Recipe of session {address.session_id}", body
    anchor = TimelineInput(anchor=address.step_id, before=0, after=0)
    around = await state.query(partial(engine.timeline, anchor))
    context = await state.query(partial(engine.step_context, StepInput(stepId=address.step_id)))
    body = {"step": _dump(around.anchor), "context": _dump(context)}
    return f"# Step {address.step_id}", body


def _dump(result: Result) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude_none=True)
