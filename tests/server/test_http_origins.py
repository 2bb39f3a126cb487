"""Browser origins a loopback server accepts, asked of a real server over real HTTP: every
loopback origin (with or without a port, IPv6 included) and the configured ones pass; foreign
origins and a foreign Host (DNS rebinding) do not."""

from pathlib import Path

import httpx2
import pytest

from tests.server.mcp_helpers import start_http, stop

pytestmark = [pytest.mark.anyio, pytest.mark.slow]

PING = b'{"jsonrpc": "2.0", "id": 1, "method": "ping"}'
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
LOOPBACK = [
    "http://[::1]",
    "http://[::1]:5173",
    "http://127.0.0.1",
    "http://127.0.0.1:3000",
    "http://localhost",
    "https://localhost:8443",
]
CONFIGURED = "https://app.example"


async def test_loopback_and_configured_origins_pass_foreign_ones_do_not(
    root: Path, index: Path, log: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KNOWHOW_ALLOWED_ORIGINS", f'["{CONFIGURED}"]')
    proc, port = start_http(root, index, log)
    url = f"http://127.0.0.1:{port}/mcp"
    try:
        async with httpx2.AsyncClient(timeout=30) as http:

            async def status(headers: dict[str, str]) -> int:
                answer = await http.post(url, headers={**JSON_HEADERS, **headers}, content=PING)
                return answer.status_code

            answers = {o: await status({"Origin": o}) for o in [*LOOPBACK, CONFIGURED]}
            assert {o: s for o, s in answers.items() if s in (403, 421)} == {}
            assert await status({"Origin": "https://evil.example"}) == 403
            assert await status({"Origin": "http://[::1].evil.example"}) == 403
            assert await status({"Host": f"evil.example:{port}"}) == 421
    finally:
        stop(proc)
