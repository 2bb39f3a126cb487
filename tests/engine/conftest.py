"""Fixtures of the engine tests that use the live index, on the `store` fixture of the test
module that asks for them: `index_dir` (empty), `engine` (a reader, as the CLI and the MCP
server use it) and `live` (a started `LiveIndex`, the writer).
"""

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine import KnowledgeEngine
from engine.live import LiveIndex
from engine.records import KnowledgeStore


@pytest.fixture
def index_dir(tmp_path: Path) -> Path:
    return tmp_path / "index"


@pytest.fixture
def engine(store: KnowledgeStore, index_dir: Path) -> KnowledgeEngine:
    return KnowledgeEngine(store.root, index_dir)


@pytest.fixture
def live(store: KnowledgeStore, index_dir: Path) -> Iterator[LiveIndex]:
    live = LiveIndex(store, index_dir, retry_seconds=0.2)
    assert live.start(wait=10)
    yield live
    live.close()
