"""knowhow's MCP server: knowledge tools, recording tools and the live index behind them.

The names below are loaded on first use (PEP 562): `knowhow search` and `batch-search` import
this package for the CLI and must not pay for the MCP SDK's imports, in memory or in start-up
time (tests/server/test_cli_loading.py keeps it so; `scripts/bench_speed.py` measures the
searching process's memory).
"""

from importlib import import_module
from typing import Any

__all__ = ["ServerSettings", "create_server", "serve"]

_HOMES = {"ServerSettings": "server.settings", "create_server": "server.app", "serve": "server.app"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOMES[name]), name)
