"""The version of knowhow installed here, for `knowhow --version` and the MCP server's info.

The distribution is `knowhow-mcp` (`knowhow` on PyPI is an unrelated project); the command it
installs is `knowhow`.
"""

from importlib.metadata import PackageNotFoundError, version

DISTRIBUTION = "knowhow-mcp"


def knowhow_version() -> str:
    """The installed version; "0" when running from a source tree that was never installed."""
    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0"
