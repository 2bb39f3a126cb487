"""Streamable HTTP: who may talk to the server.

Bound to loopback (the default) the server is reachable from this machine only, and the SDK's
DNS-rebinding protection checks Host and Origin. Bound to any other address it exposes the
knowledge to the network, so it refuses to start without a bearer token, and `HttpGuard`
rejects requests without that token and requests from browser origins other than loopback ones
or those configured (`allowed_origins`): a web page must not drive the tools of a local agent.
"""

import hmac
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlsplit

from mcp.server import Server
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from server.settings import ServerSettings, is_loopback_host

MCP_PATH = "/mcp"


class UnsafeBinding(Exception):
    """The HTTP address would expose the server without a token."""


def origin_allowed(origin: str, allowed: Iterable[str]) -> bool:
    """Loopback origins and the configured ones; `null` and everything else is foreign."""
    if origin.rstrip("/") in {a.rstrip("/") for a in allowed}:
        return True
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and is_loopback_host(parts.hostname)


def token_matches(authorization: str | None, token: str) -> bool:
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not presented:
        return False
    return hmac.compare_digest(presented.strip().encode(), token.encode())


class HttpGuard:
    """ASGI middleware: foreign `Origin` → 403, missing or wrong bearer token → 401."""

    def __init__(self, app: ASGIApp, *, token: str | None, allowed_origins: Iterable[str]) -> None:
        self.app = app
        self.token = token
        self.allowed_origins = tuple(allowed_origins)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        origin = headers.get("origin")
        if origin is not None and not origin_allowed(origin, self.allowed_origins):
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


def build_http_app(server: Server[Any], settings: ServerSettings) -> ASGIApp:
    """The MCP endpoint at `/mcp`, behind the guard; refuses an exposed address without token."""
    token = settings.token.get_secret_value() if settings.token else None
    loopback = settings.is_loopback()
    if not loopback and not token:
        raise UnsafeBinding(
            f"binding to {settings.host} exposes the knowledge to the network: "
            "pass --token or set KNOWHOW_TOKEN (or bind to 127.0.0.1)"
        )
    security = (
        None if loopback else TransportSecuritySettings(enable_dns_rebinding_protection=False)
    )
    app = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=settings.host,
        transport_security=security,
        max_sessions=settings.http_max_sessions,
    )
    return HttpGuard(app, token=token, allowed_origins=settings.allowed_origins)
