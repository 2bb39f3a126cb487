"""The web page beside `/mcp`: search, sessions, screens, charts and curation in a browser.

Served by `knowhow serve --transport http` (and `knowhow ui`) from the same Starlette app and
behind the same guard as the MCP endpoint. Pages are rendered on the server with Jinja2
(autoescaped: recorded text is data), charts are inline SVG computed from the index, and one
small script (`static/ui.js`) keeps the open page live and sends curation requests. Everything
it needs ships in the package; nothing is fetched from elsewhere.
"""

from typing import Any

from mcp.server import Server
from starlette.routing import Route

from server.state import ServerState
from server.ui.pages import Pages

UI_PATH = "/ui/"


def ui_routes(server: Server[Any]) -> list[Route]:
    """The page's routes for `server`'s HTTP app; they read the state its lifespan opened (the
    session manager enters the lifespan once and keeps what it yielded)."""

    def state() -> ServerState | None:
        held = getattr(server.session_manager, "_lifespan_state", None)
        return held if isinstance(held, ServerState) else None

    return Pages(state).routes()


__all__ = ["UI_PATH", "ui_routes"]
