"""The knowhow MCP server: `create_server(settings)` and `serve(settings)` (stdio or HTTP).

Built on the SDK's low-level `Server` so that `tools/list` carries IMPROVEMENT-01's schemas
exactly and every argument reaches our own validation: a bad argument is an `MM_INVALID_INPUT`
envelope naming the field, never an SDK-shaped error. The lifespan owns the live index and the
engine. Logs go to stderr only: in stdio mode stdout is the protocol.
"""

import logging
import sys
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager, nullcontext
from typing import Any

import anyio
import orjson
from mcp import types
from mcp.server import NotificationOptions, Server, ServerRequestContext
from mcp.server.context import CallNext, HandlerResult
from mcp.server.models import InitializationOptions
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http import MCP_SESSION_ID_HEADER
from mcp.shared.exceptions import MCPError
from mcp.types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.routing import Route

from engine import KnowhowError, Result
from server import completions, prompts, resources
from server.arguments import values_from_text
from server.envelope import envelope
from server.resource_changes import SessionWatch
from server.settings import ServerSettings
from server.state import ServerState, open_state
from server.tools.browser import BROWSER_TOOLS
from server.tools.knowledge import TOOLS
from server.tools.spec import ToolSpec
from server.transport.http import MCP_PATH, build_http_app
from server.transport.http_limits import backlog, bounded_protocol
from server.transport.log_limit import RepeatLimit
from server.transport.stdio import (
    AnsweredReadStream,
    AnsweredWrites,
    Pending,
    StdinLines,
    stopped_by_sigint,
)
from server.ui import ui_routes
from server.version import knowhow_version
from server.workload import connection_gone

log = logging.getLogger(__name__)

INSTRUCTIONS = (
    "Before exploring a screen or flow, ask {prefix}knowledge_search what earlier agents did "
    "(all sessions by default; filter by flowTag). Pick a prior run with "
    "{prefix}knowledge_sessions and read its recipe with {prefix}knowledge_summarize."
)


def success(result: Result) -> types.CallToolResult:
    return _tool_result(envelope(result), is_error=False)


def failure(error: KnowhowError) -> types.CallToolResult:
    return _tool_result(envelope(error), is_error=True)


def _tool_result(body: dict[str, Any], *, is_error: bool) -> types.CallToolResult:
    """The envelope as structured content and as its JSON text (for clients reading text)."""
    text = orjson.dumps(body).decode()
    return types.CallToolResult(
        content=[types.TextContent(text=text)], structured_content=body, is_error=is_error
    )


async def run_tool(
    tool: ToolSpec, state: ServerState, arguments: dict[str, Any]
) -> types.CallToolResult:
    """Call a handler and wrap its result or its KnowhowError in the envelope.

    Anything else is a bug, but a client must still get an envelope it can read, never a
    protocol error it cannot tell from a lost connection: its kind and message, the traceback
    in the server's log (stderr)."""
    try:
        result = await tool.handler(state, values_from_text(arguments, tool.container_arguments))
    except KnowhowError as exc:
        return failure(exc)
    except Exception as exc:
        log.exception("%s failed unexpectedly", tool.name)
        return failure(KnowhowError(f"unexpected {type(exc).__name__}: {exc} (see the server log)"))
    return success(result)


def client_of(ctx: ServerRequestContext[ServerState]) -> str:
    """Which client a call comes from: over HTTP with a session-ful protocol version, its MCP
    session id (several agents may share one server), which the SDK checked before routing the
    call to that session. "" for the one client over stdio, and for every request of the
    stateless protocol (2026): they have no MCP session, and an `mcp-session-id` header such a
    request carries is ignored, by the SDK and here."""
    headers = getattr(ctx.request, "headers", None)
    if headers is None or ctx.protocol_version not in HANDSHAKE_PROTOCOL_VERSIONS:
        return ""
    session_id = headers.get(MCP_SESSION_ID_HEADER)
    return session_id if isinstance(session_id, str) else ""


class KnowhowServer(Server[ServerState]):
    """The SDK's server, announcing `resources.listChanged` to clients of the handshake
    protocol whatever the transport (the streamable HTTP manager asks for the options itself)."""

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> InitializationOptions:
        return super().create_initialization_options(
            notification_options or NotificationOptions(resources_changed=True),
            experimental_capabilities,
            extensions,
        )


Attach = Callable[[ServerState], AbstractAsyncContextManager[None]]
"""What else runs while the state is open (over HTTP: the command line's endpoint file)."""


def nothing_attached(_: ServerState) -> AbstractAsyncContextManager[None]:
    return nullcontext()


def create_server(
    settings: ServerSettings, attach: Attach = nothing_attached
) -> Server[ServerState]:
    """A server for one knowledge root and index; nothing is opened until its lifespan runs,
    and `attach` runs while the state is open (the HTTP server's answers to the command line)."""
    prefix = settings.tool_prefix
    specs = (*TOOLS, *BROWSER_TOOLS)
    tools = {prefix + t.name: t for t in specs}
    listing = types.ListToolsResult(tools=[t.describe(prefix) for t in specs])
    watch = SessionWatch(settings.http_max_sessions)

    async def list_tools(
        ctx: ServerRequestContext[ServerState], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return listing

    async def call_tool(
        ctx: ServerRequestContext[ServerState], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        tool = tools.get(params.name)
        if tool is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown tool {params.name!r}; see tools/list")
        state = ctx.lifespan_context.for_client(client_of(ctx), connection_gone(ctx.request))
        return await run_tool(tool, state, params.arguments or {})

    async def list_resources(
        ctx: ServerRequestContext[ServerState], params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        return await resources.list_resources(
            ctx.lifespan_context, params.cursor if params else None
        )

    async def list_templates(
        ctx: ServerRequestContext[ServerState], params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(resource_templates=list(resources.TEMPLATES))

    async def read_resource(
        ctx: ServerRequestContext[ServerState], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await resources.read_resource(ctx.lifespan_context, params.uri)

    async def subscribe(
        ctx: ServerRequestContext[ServerState], params: types.SubscribeRequestParams
    ) -> types.EmptyResult:
        await watch.subscribe(ctx.lifespan_context, client_of(ctx), params.uri)
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[ServerState], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        watch.unsubscribe(client_of(ctx), params.uri)
        return types.EmptyResult()

    async def list_prompts(
        ctx: ServerRequestContext[ServerState], params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        return types.ListPromptsResult(prompts=list(prompts.PROMPTS))

    async def get_prompt(
        ctx: ServerRequestContext[ServerState], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        return await prompts.get_prompt(ctx.lifespan_context, params.name, params.arguments)

    async def complete(
        ctx: ServerRequestContext[ServerState], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        return await completions.complete(ctx.lifespan_context, params)

    async def set_level(
        ctx: ServerRequestContext[ServerState], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        """Accepted, so a client of the 2025 revisions may set it; knowhow sends no log
        notifications (its log is stderr), so every level filters all of them."""
        return types.EmptyResult()

    async def remember(
        ctx: ServerRequestContext[ServerState], call_next: CallNext
    ) -> HandlerResult:
        """Middleware: the clients of the handshake protocol, to tell of new sessions."""
        if ctx.protocol_version in HANDSHAKE_PROTOCOL_VERSIONS:
            watch.remember(client_of(ctx), ctx.session)
        return await call_next(ctx)

    @asynccontextmanager
    async def lifespan(_: Server[ServerState]) -> AsyncIterator[ServerState]:
        async with (
            open_state(settings) as state,
            attach(state),
            anyio.create_task_group() as tasks,
        ):
            tasks.start_soon(watch.run, state)
            log.info("knowhow serving %s (index %s)", settings.root, settings.index)
            try:
                yield state
            finally:
                tasks.cancel_scope.cancel()

    server = KnowhowServer(
        "knowhow",
        version=knowhow_version(),
        instructions=INSTRUCTIONS.replace("{prefix}", prefix),
        lifespan=lifespan,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=subscribe,
        on_unsubscribe_resource=unsubscribe,
        on_subscriptions_listen=watch.listen,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_completion=complete,
    )
    # Registered by method name: the SDK's keyword for it warns (the 2026 revision moved log
    # levels into each request), and clients of the 2025 revisions still call it.
    server.add_request_handler("logging/setLevel", types.SetLevelRequestParams, set_level)
    server.middleware.append(remember)
    return server


async def serve_stdio(settings: ServerSettings) -> None:
    """Serve one client on stdin/stdout until stdin ends (every request read answered) or
    Ctrl-C (`stopped_by_sigint`)."""
    server = create_server(settings)
    pending = Pending()
    async with anyio.create_task_group() as group:
        group.start_soon(stopped_by_sigint, group.cancel_scope)
        async with stdio_server(stdin=StdinLines(pending)) as (read_stream, write_stream):
            writes = AnsweredWrites(write_stream, pending)
            answered = AnsweredReadStream(read_stream, writes)
            await server.run(answered, writes, server.create_initialization_options())
        group.cancel_scope.cancel()


async def serve_http(
    settings: ServerSettings, attach: Attach = nothing_attached, routes: Sequence[Route] = ()
) -> None:
    import uvicorn  # only HTTP mode needs it

    server = create_server(settings, attach)
    app = build_http_app(server, settings, [*routes, *ui_routes(server)])
    protocol = bounded_protocol(settings.http_max_connections, settings.http_request_seconds)
    config = uvicorn.Config(
        app,
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        http=protocol,
        backlog=backlog(protocol.max_connections),
    )
    log.info("knowhow listening on http://%s:%d%s", settings.host, settings.port, MCP_PATH)
    await uvicorn.Server(config).serve()


def configure_logging(verbosity: int) -> None:
    """Log to stderr (`-v` info, `-vv` debug); stdout belongs to the protocol. No kind of
    record can flood it (`RepeatLimit`)."""
    level = logging.WARNING - 10 * min(verbosity, 2)
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(RepeatLimit())
    logging.basicConfig(
        handlers=[handler],
        level=level,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )


def serve(
    settings: ServerSettings,
    verbosity: int = 0,
    attach: Attach = nothing_attached,
    routes: Sequence[Route] = (),
) -> None:
    """Run until the client disconnects (stdio) or the process is stopped (HTTP). Over HTTP,
    `attach` runs while the state is open and `routes` are served beside `/mcp`."""
    configure_logging(verbosity)
    if settings.transport == "stdio":
        anyio.run(serve_stdio, settings)
    else:
        anyio.run(serve_http, settings, attach, routes)
