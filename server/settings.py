"""Settings of the MCP server: the engine's settings plus transport, security and live-index knobs.

Read once, by `knowhow serve` (CLI flags override the environment), and passed to
`create_server`; nothing else reads the environment.
"""

from ipaddress import ip_address
from pathlib import Path
from typing import Literal

from pydantic import Field, SecretStr

from engine import Settings

LOOPBACK_NAMES = frozenset({"localhost", "ip6-localhost"})
DEMO_APP_PORT = 8766
"""Where `knowhow demo --serve` (what `make run` runs) serves the demo wallet, beside MCP on
8765: the app the browser tools' examples launch, so an agent copying one opens a wallet."""
DEMO_APP_URL = f"http://127.0.0.1:{DEMO_APP_PORT}/"


class ServerSettings(Settings):
    """Environment (prefix `KNOWHOW_`), in addition to ROOT, INDEX, SYNONYMS and SESSION:

    TRANSPORT             `stdio` (default) or `http` (streamable HTTP)
    HOST, PORT            HTTP address (default 127.0.0.1:8765); any non-loopback host needs TOKEN
    TOKEN                 bearer token HTTP clients must send (`Authorization: Bearer …`)
    ALLOWED_ORIGINS       browser origins accepted besides loopback ones (JSON list)
    HTTP_MAX_SESSIONS     MCP sessions (clients) HTTP keeps open at once (default 10,000); each
                          client's current session is remembered for as many
    HTTP_MAX_CONNECTIONS  HTTP connections open at once (default 256; at most half the
                          process's open-file limit); one more is answered 503
    HTTP_REQUEST_SECONDS  time a client has to send a whole request, headers and body
                          (default 10); a connection still sending then is closed
    QUERIES_RUNNING       reads (search, summarize, …) computed at once, by all clients
                          (default 2); the others wait their turn
    QUERIES_WAITING       reads waiting for a turn (default 64); one more is refused with
                          MM_BUSY at once
    CLIENT_QUERIES        reads one HTTP client (MCP session) has running or waiting
                          (default 8); one more is refused with MM_BUSY
    TOOL_PREFIX           prefix of every tool name (default `mm_`)
    CHROMIUM              Chromium for the browser tools (default /usr/bin/chromium when
                          present, else Playwright's own browser)
    SCREEN_RULES          JSON screen-detection rules of the app under test (default: MetaMask's)
    ALLOW_FILE_URLS       `true` lets `launch` and `navigate` open file:// URLs (default: refused,
                          they would show an agent any file of this machine)
    """

    transport: Literal["stdio", "http"] = "stdio"
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    token: SecretStr | None = None
    allowed_origins: list[str] = Field(default_factory=list)
    http_max_sessions: int = Field(default=10_000, ge=1)
    http_max_connections: int = Field(default=256, ge=1)
    http_request_seconds: float = Field(default=10.0, gt=0)
    queries_running: int = Field(default=2, ge=1, le=256)
    queries_waiting: int = Field(default=64, ge=0, le=100_000)
    client_queries: int = Field(default=8, ge=1, le=100_000)
    tool_prefix: str = Field(default="mm_", pattern=r"^[A-Za-z0-9_]{0,32}$")
    debounce_ms: int = Field(default=100, ge=0, le=5000)
    writer_retry_seconds: float = Field(default=1.0, gt=0)
    writer_stall_seconds: float = Field(default=60.0, gt=0)
    """A writer that makes no progress this long loses its lease to a standby."""
    reconcile_seconds: float = Field(default=60.0, gt=0)
    startup_wait_seconds: float = Field(default=15.0, ge=0)
    chromium: Path | None = None
    screen_rules: Path | None = None
    allow_file_urls: bool = False

    def is_loopback(self) -> bool:
        """Whether HTTP binds to this machine only (then no token is required)."""
        return is_loopback_host(self.host)


def is_loopback_host(host: str | None) -> bool:
    """`localhost`, 127.0.0.0/8 or ::1."""
    if not host:
        return False
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False
