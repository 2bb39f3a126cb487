"""knowhow's MCP server: knowledge tools, recording tools and the live index behind them."""

from server.app import create_server, serve
from server.settings import ServerSettings

__all__ = ["ServerSettings", "create_server", "serve"]
