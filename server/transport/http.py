"""Streamable HTTP: who may talk to the server.

Bound to loopback (the default) the server is reachable from this machine only, and `HttpGuard`
refuses a `Host` that is not a loopback name or address (a web page whose DNS name was rebound
to 127.0.0.1 still sends its own name). Bound to any other address it exposes the knowledge to
the network, so it refuses to start without a bearer token, and `HttpGuard` rejects requests
without that token. Either way it rejects requests from browser origins other than loopback
ones (with or without a port, IPv6 `[::1]` included) or those configured (`allowed_origins`):
a web page must not drive the tools of a local agent. The SDK's own Host/Origin check is off:
it knew loopback origins only with a port, and none of the configured ones.
"""

import hmac
import re
from collections.abc import Iterable, Sequence
from typing import Any

from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

from server.settings import ServerSettings, is_loopback_host
from server.transport.priming import RETRY_MS, PrimingIds

MCP_PATH = "/mcp"


class UnsafeBinding(Exception):
    """The HTTP address would expose the server without a token."""


AUTHORITY = re.compile(r"(\[[0-9A-Fa-f:.]+\]|[^:\[\]/@]+)(?::\d{1,5})?")
"""`host[:port]`, an IPv6 address only in brackets with nothing around them."""


def origin_allowed(origin: str, allowed: Iterable[str]) -> bool:
    """Loopback origins and the configured ones; `null` and everything else is foreign."""
    if origin.rstrip("/") in {a.rstrip("/") for a in allowed}:
        return True
    scheme, _, authority = origin.partition("://")
    return scheme in ("http", "https") and host_is_loopback(authority.rstrip("/"))


def host_is_loopback(authority: str | None) -> bool:
    """A `Host` header (or an origin's `host[:port]`) naming this machine: `localhost`,
    127.0.0.0/8 or `[::1]`, any port."""
    match = AUTHORITY.fullmatch(authority or "")
    return match is not None and is_loopback_host(match[1])


def token_matches(authorization: str | None, token: str) -> bool:
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not presented:
        return False
    return hmac.compare_digest(presented.strip().encode(), token.encode())


class HttpGuard:
    """ASGI middleware: a foreign `Host` on a loopback server → 421, a foreign `Origin` → 403,
    a missing or wrong bearer token → 401."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        token: str | None,
        allowed_origins: Iterable[str],
        loopback: bool = False,
    ) -> None:
        self.app = app
        self.token = token
        self.allowed_origins = tuple(allowed_origins)
        self.loopback = loopback

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if self.loopback and not host_is_loopback(headers.get("host")):
            response = PlainTextResponse("Invalid Host header", status_code=421)
        elif origin is not None and not origin_allowed(origin, self.allowed_origins):
            response = PlainTextResponse(f"origin {origin} is not allowed", status_code=403)
        elif self.token is not None and not token_matches(headers.get("authorization"), self.token):
            response = PlainTextResponse(
                "missing or wrong bearer token",
                status_code=401,
                headers={"WWW-Authenticate": "Bearer"},
            )
        else:
            await self.app(scope, receive, send)
            return
        await response(scope, receive, send)


def build_http_app(
    server: Server[Any], settings: ServerSettings, routes: Sequence[Route] = ()
) -> ASGIApp:
    """The MCP endpoint at `/mcp` (and `routes` beside it), behind the guard; refuses an
    exposed address without token."""
    token = settings.token.get_secret_value() if settings.token else None
    loopback = settings.is_loopback()
    if not loopback and not token:
        raise UnsafeBinding(
            f"binding to {settings.host} exposes the knowledge to the network: "
            "pass --token or set KNOWHOW_TOKEN (or bind to 127.0.0.1)"
        )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=settings.host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_sessions=settings.http_max_sessions,
        custom_starlette_routes=list(routes),
        event_store=PrimingIds(),
        retry_interval=RETRY_MS,
    )
    return HttpGuard(app, token=token, allowed_origins=settings.allowed_origins, loopback=loopback)
