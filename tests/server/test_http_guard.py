"""Who may talk to the HTTP server: loopback by default, a bearer token otherwise, no foreign
browser origins — checked on the guard itself (ASGI calls, no network)."""

from pathlib import Path
from typing import Any

import pytest
from pydantic import SecretStr
from starlette.types import Message, Receive, Scope, Send

from server.app import create_server
from server.settings import ServerSettings
from server.transport.http import (
    HttpGuard,
    UnsafeBinding,
    build_http_app,
    origin_allowed,
    token_matches,
)

pytestmark = pytest.mark.anyio


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://127.0.0.1:8765", True),
        ("http://localhost:3000", True),
        ("http://[::1]:8765", True),
        ("http://[::1]", True),
        ("http://localhost", True),
        ("https://127.0.0.1/", True),
        ("http://[::1].evil.example", False),
        ("http://localhost.evil.example", False),
        ("http://user@127.0.0.1", False),
        ("http://127.0.0.1:99999999", False),
        ("https://app.example", True),
        ("https://evil.example", False),
        ("http://127.0.0.1.evil.example", False),
        ("null", False),
        ("file://", False),
    ],
)
def test_origins(origin: str, allowed: bool) -> None:
    assert origin_allowed(origin, ["https://app.example/"]) is allowed


@pytest.mark.parametrize(
    ("header", "matches"),
    [
        ("Bearer s3cret", True),
        ("bearer s3cret", True),
        ("Bearer wrong", False),
        ("Basic s3cret", False),
        ("Bearer", False),
        (None, False),
    ],
)
def test_bearer_token(header: str | None, matches: bool) -> None:
    assert token_matches(header, "s3cret") is matches


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        ("127.0.0.1", True),
        ("localhost", True),
        ("::1", True),
        ("0.0.0.0", False),
        ("10.1.2.3", False),
    ],
)
def test_non_loopback_address_needs_a_token(
    root: Path, index: Path, host: str, loopback: bool
) -> None:
    settings = ServerSettings(root=root, index=index, transport="http", host=host)
    assert settings.is_loopback() is loopback
    server = create_server(settings)
    if loopback:
        build_http_app(server, settings)
    else:
        with pytest.raises(UnsafeBinding, match="KNOWHOW_TOKEN"):
            build_http_app(server, settings)
        build_http_app(server, settings.model_copy(update={"token": SecretStr("s3cret")}))


async def _request(token: str | None, headers: dict[str, str]) -> tuple[int, list[str]]:
    """Send one POST through a guard; the status, and whether the app behind it saw it."""
    seen: list[str] = []
    sent: list[Message] = []

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        seen.append("app")
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    async def receive() -> Message:
        return {"type": "http.request", "body": b"{}", "more_body": False}

    async def send(message: Message) -> None:
        sent.append(message)

    scope: dict[str, Any] = {
        "type": "http",
        "method": "POST",
        "path": "/mcp",
        "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()],
    }
    await HttpGuard(app, token=token, allowed_origins=[])(scope, receive, send)
    return int(sent[0]["status"]), seen


async def test_guard_rejects_missing_token_and_foreign_origin() -> None:
    assert await _request("s3cret", {}) == (401, [])
    assert await _request("s3cret", {"Authorization": "Bearer nope"}) == (401, [])
    assert await _request("s3cret", {"Authorization": "Bearer s3cret"}) == (200, ["app"])
    foreign = {"Authorization": "Bearer s3cret", "Origin": "https://evil.example"}
    assert await _request("s3cret", foreign) == (403, [])
    local = {"Authorization": "Bearer s3cret", "Origin": "http://localhost:5173"}
    assert await _request("s3cret", local) == (200, ["app"])


async def test_guard_without_token_still_checks_origin() -> None:
    assert await _request(None, {}) == (200, ["app"])
    assert await _request(None, {"Origin": "https://evil.example"}) == (403, [])
