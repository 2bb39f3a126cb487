"""Fixtures of the server tests: a tmp knowledge root and index, and anyio on asyncio."""

from pathlib import Path

import pytest


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty knowledge root (`knowhow serve` refuses one that does not exist)."""
    path = tmp_path / "llm-knowledge"
    path.mkdir()
    return path


@pytest.fixture
def index(tmp_path: Path) -> Path:
    return tmp_path / "index"


@pytest.fixture
def log(tmp_path: Path) -> Path:
    """Where server subprocesses write stderr (shown when a test fails)."""
    return tmp_path / "server.log"
