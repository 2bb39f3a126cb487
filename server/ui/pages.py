"""The page's routes under `/ui`: HTML pages, the screenshot route, JSON for live updates and
curation, and the static files.

They sit behind the same `HttpGuard` as `/mcp` (a foreign Host or Origin, a missing token are
refused before any of this runs). On top of it, every response forbids scripts and styles from
anywhere but `/ui/static` and every inline script (`SECURITY_HEADERS`): recorded text reaches the
page autoescaped by Jinja2, and even a value that escaped escaping could not run. A change
(supersede, restore) is a POST of JSON carrying the page's own token (`X-Knowhow-Page`): a form
on another site can send neither that content type without a preflight nor the token, and a
browser that says the request is cross-site (`Sec-Fetch-Site`) is refused outright.
"""

import hmac
import secrets
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import orjson
from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from engine import (
    InvalidInput,
    KnowhowError,
    StepInput,
    SupersedeInput,
    restore_step,
    supersede_step,
    validate,
)
from server.envelope import envelope
from server.state import ServerState
from server.ui import charts, views
from server.ui.shots import screenshot

HERE = Path(__file__).parent
SECURITY_HEADERS = {
    "Content-Security-Policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}
STATIC_TYPES = {
    ".css": "text/css; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".svg": "image/svg+xml",
}
PAGE_TOKEN_HEADER = "X-Knowhow-Page"
MAX_BODY = 4096
"""A supersede or restore request is a step id and a reason: a few hundred bytes."""

StateOf = Callable[[], ServerState | None]
Handler = Callable[[Request, ServerState], Awaitable[Response]]


class Pages:
    """The handlers, with the templates and the page token of this server process."""

    def __init__(self, state_of: StateOf) -> None:
        self.state_of = state_of
        self.page_token = secrets.token_urlsafe(24)
        self.templates = Environment(
            loader=FileSystemLoader(HERE / "templates"),
            autoescape=select_autoescape(default=True, default_for_string=True),
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.templates.globals["query_with"] = query_with
        self.files = {
            path.name: (path.read_bytes(), STATIC_TYPES[path.suffix])
            for path in (HERE / "static").iterdir()
            if path.suffix in STATIC_TYPES
        }

    def routes(self) -> list[Route]:
        return [
            Route("/ui", lambda _: RedirectResponse("/ui/", status_code=308)),
            Route("/ui/", self._with_state(self.search)),
            Route("/ui/session/{session_id}", self._with_state(self.session)),
            Route("/ui/screen", self._with_state(self.screen)),
            Route("/ui/charts", self._with_state(self.charts)),
            Route("/ui/shot", self._with_state(self.shot)),
            Route("/ui/api/version", self._with_state(self.version)),
            Route("/ui/api/supersede", self._with_state(self.supersede), methods=["POST"]),
            Route("/ui/api/restore", self._with_state(self.restore), methods=["POST"]),
            Route("/ui/static/{name}", self.static),
        ]

    def _with_state(self, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
        """The handler once the server's state is open (503 while it starts), its answer with
        `SECURITY_HEADERS`; a refused input is the page's error, never a traceback."""

        async def endpoint(request: Request) -> Response:
            state = self.state_of()
            if state is None:
                response: Response = Response("starting, retry in a moment", status_code=503)
            else:
                try:
                    response = await handler(request, state)
                except KnowhowError as exc:
                    response = self._error(request, exc)
            response.headers.update(SECURITY_HEADERS)
            return response

        return endpoint

    def _error(self, request: Request, error: KnowhowError) -> Response:
        status = {"MM_NOT_FOUND": 404, "MM_INVALID_INPUT": 400}.get(error.code, 503)
        if request.url.path.startswith(("/ui/api/", "/ui/shot")):
            return JSONResponse(envelope(error), status_code=status)
        return self._page("error.html", request, status=status, error=error)

    def _page(self, name: str, request: Request, *, status: int = 200, **values: Any) -> Response:
        html = self.templates.get_template(name).render(
            page_token=self.page_token, path=request.url.path, **values
        )
        return Response(html, status_code=status, media_type="text/html; charset=utf-8")

    # -- pages ------------------------------------------------------------------------------
    async def search(self, request: Request, state: ServerState) -> Response:
        params = dict(request.query_params)
        asked = views.search_request(params)
        page = await views.search(state, asked) if asked is not None else None
        return self._page("search.html", request, params=params, page=page, asked=asked)

    async def session(self, request: Request, state: ServerState) -> Response:
        session_id = request.path_params["session_id"]  # validated as summarize validates it
        offset = views.page_offset(request.query_params.get("offset"))
        shown = await views.session(state, session_id, offset)
        return self._page("session.html", request, view=shown, page_size=views.TIMELINE_PAGE)

    async def screen(self, request: Request, state: ServerState) -> Response:
        shown = await views.screen(state, request.query_params.get("name", ""))
        return self._page("screen.html", request, view=shown)

    async def charts(self, request: Request, state: ServerState) -> Response:
        drawn = await charts.charts(state)
        return self._page(
            "charts.html", request, charts=drawn, width=charts.WIDTH, bar_width=charts.BAR_WIDTH
        )

    async def shot(self, request: Request, state: ServerState) -> Response:
        step_id = request.query_params.get("step", "")
        data, kind = await state.query(lambda: screenshot(state.store, step_id))
        return Response(data, media_type=kind)

    async def static(self, request: Request) -> Response:
        """The stylesheet and the script, from the package (read once: a file name is only
        ever looked up, never joined to a path)."""
        found = self.files.get(request.path_params["name"])
        if found is None:
            return Response("not found", status_code=404, headers=SECURITY_HEADERS)
        data, kind = found
        headers = SECURITY_HEADERS | {"Cache-Control": "max-age=300"}
        return Response(data, media_type=kind, headers=headers)

    # -- JSON -------------------------------------------------------------------------------
    async def version(self, request: Request, state: ServerState) -> Response:
        """What the live index holds now (generation and commit): the page reloads its live
        parts when it changes."""

        def stamp() -> str:
            reader = state.engine.reader
            return f"{reader.path.name}:{reader.commit.hex()}"

        return JSONResponse({"version": await state.query(stamp)})

    async def supersede(self, request: Request, state: ServerState) -> Response:
        """`mm_knowledge_supersede`, exactly: the same validation and the same engine call."""
        arguments = await self._change(request)
        done = await state.write(
            lambda: supersede_step(state.store, validate(SupersedeInput, arguments))
        )
        return JSONResponse(envelope(done))

    async def restore(self, request: Request, state: ServerState) -> Response:
        arguments = await self._change(request)
        request_data = validate(StepInput, arguments)
        done = await state.write(lambda: restore_step(state.store, request_data))
        return JSONResponse(envelope(done))

    async def _change(self, request: Request) -> dict[str, Any]:
        """The JSON arguments of a change, once the request is shown to come from this page."""
        if request.headers.get("sec-fetch-site") not in (None, "same-origin", "none"):
            raise InvalidInput("request", "a change must come from the knowhow page itself")
        presented = request.headers.get(PAGE_TOKEN_HEADER, "")
        if not hmac.compare_digest(presented.encode(), self.page_token.encode()):
            raise InvalidInput(PAGE_TOKEN_HEADER, "missing or stale page token: reload the page")
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            raise InvalidInput("content-type", "send the arguments as application/json")
        body = await request.body()
        if len(body) > MAX_BODY:
            raise InvalidInput("request", f"larger than {MAX_BODY} bytes")
        try:
            arguments = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise InvalidInput("request", "not JSON") from None
        if not isinstance(arguments, dict):
            raise InvalidInput("request", "send a JSON object")
        return arguments


def query_with(params: dict[str, str], **changes: object) -> str:
    """The page's query string with some parameters changed (the pager's links)."""
    return urlencode({**params, **{k: str(v) for k, v in changes.items()}})
