"""Damage to a generation's vector store is found, answered by keywords and healed.

The vectors are part of the generation's integrity check (their size, checksum and count
against their keys): a search over a damaged store answers by keywords and says `degraded`,
whoever writes the index next embeds the damaged texts again (never zeros in their place),
and rows are read into memory as they are checked, never mapped: a mapped file cut short under
a running process kills it with SIGBUS at the next read past its end.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import orjson
import pytest

from engine import KnowledgeEngine
from engine.core import SearchInput, validate
from engine.embedding import KEYS_FILE, META_FILE, ROWS_FILE
from engine.index import IndexLayout, rebuild
from tests.conftest import FIXED_NOW, Knowledge

PARAPHRASE = "open the vault with my secret"
"""No word of it is in the records: only the semantic leg finds the unlock step."""
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def generation(kb: Knowledge) -> Path:
    """An index of a few sessions with distinct texts, and its vectors."""
    kb.session("mm-unlock", hours_ago=3, goal="Unlock the wallet", flow_tags=["unlock"])
    kb.step("mm-unlock", "mm_type", test_id="unlock-password", text="pw", screen="unlock")
    kb.step("mm-unlock", test_id="unlock-submit", screen="home")
    kb.session("mm-send", hours_ago=5, goal="Send ETH to a friend", flow_tags=["send"])
    for test_id in ("coin-overview-send", "recipient-address-input", "send-amount-input"):
        kb.step("mm-send", test_id=test_id, screen="send")
    kb.session("mm-swap", hours_ago=6, goal="Swap tokens", flow_tags=["swap"])
    kb.step("mm-swap", test_id="coin-overview-swap", screen="swap")
    kb.index()
    current = IndexLayout(kb.index_dir).current()
    assert current is not None
    return current


def reader_search(kb: Knowledge, query: str, **fields: object):  # type: ignore[no-untyped-def]
    engine = KnowledgeEngine(kb.root, kb.index_dir, now=lambda: FIXED_NOW)
    return engine.search(validate(SearchInput, {"query": query, **fields}))


def stored(generation: Path) -> tuple[list[str], np.ndarray]:
    keys = (generation / KEYS_FILE).read_text().split()
    dimension = int(orjson.loads((generation / META_FILE).read_bytes())["dimension"])
    rows = np.fromfile(generation / ROWS_FILE, "<f4")
    return keys, rows.reshape(-1, dimension)


def cut_in_half(path: Path) -> None:
    os.truncate(path, path.stat().st_size // 2)


def scramble(path: Path) -> None:
    size = path.stat().st_size
    with path.open("r+b") as handle:
        handle.seek(size // 4)
        handle.write(os.urandom(size // 2))


def assert_healed(kb: Knowledge, generation: Path, before: np.ndarray) -> None:
    """Every key has its own vector again (the same one: the model is deterministic)."""
    current = IndexLayout(kb.index_dir).current()
    assert current is not None
    keys, rows = stored(current)
    assert len(rows) == len(keys) == len(before)
    assert not (np.abs(rows).sum(axis=1) == 0).any(), "zero vectors stand in for lost ones"
    assert np.allclose(np.sort(rows, axis=0), np.sort(before, axis=0), atol=1e-5)
    page = reader_search(kb, PARAPHRASE)
    assert page.degraded is None and page.modeUsed == "hybrid"
    assert "mm-unlock/0001-mm_type" in [r.stepId for r in page.steps()]


@pytest.mark.parametrize("damage", [cut_in_half, scramble], ids=["cut", "scrambled"])
def test_damaged_rows_are_answered_by_keywords_and_healed_by_embedding(
    kb: Knowledge, generation: Path, damage
) -> None:  # type: ignore[no-untyped-def]
    _, before = stored(generation)
    damage(generation / ROWS_FILE)
    for mode in ("hybrid", "semantic"):
        page = reader_search(kb, "unlock the wallet", mode=mode)
        assert page.modeUsed == "keyword"
        assert page.degraded is not None and "vector" in page.degraded
        assert page.total > 0
    kb.index()  # `knowhow index`: the writer heals what it finds
    assert_healed(kb, generation, before)


def test_emptied_vector_metadata_is_damage_not_an_empty_store(
    kb: Knowledge, generation: Path
) -> None:
    _, before = stored(generation)
    (generation / META_FILE).write_bytes(b"")
    page = reader_search(kb, PARAPHRASE, mode="semantic")
    assert page.degraded is not None and "vector" in page.degraded
    kb.index()
    assert_healed(kb, generation, before)


def test_a_reindex_never_copies_damaged_vectors_on(kb: Knowledge, generation: Path) -> None:
    _, before = stored(generation)
    scramble(generation / ROWS_FILE)
    rebuild(kb.store, kb.index_dir)
    assert_healed(kb, generation, before)


MAPPED_THEN_CUT = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from engine import KnowledgeEngine
    from engine.core import SearchInput, validate
    from engine.embedding import KEYS_FILE, ROWS_FILE
    from engine.index import IndexLayout

    root, index = Path(sys.argv[1]), Path(sys.argv[2])
    engine = KnowledgeEngine(root, index)

    def ask(query):
        page = engine.search(validate(SearchInput, {"query": query, "mode": "semantic"}))
        return page.modeUsed, page.degraded is not None

    assert ask("open the vault with my secret") == ("semantic", False)  # the rows are read
    generation = IndexLayout(index).current()
    os.truncate(generation / ROWS_FILE, 0)
    print(*ask("unlock vault"))  # the rows read before, checked then
    with (generation / KEYS_FILE).open("a") as keys:
        keys.write("0123456789abcdef\\n")  # a key whose row was never written
    print(*ask("open my safe"))  # the query was embedded early, then answered by keywords
    """
)


def test_rows_cut_under_a_running_search_never_kill_the_process(
    kb: Knowledge, generation: Path
) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MAPPED_THEN_CUT, str(kb.root), str(kb.index_dir)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.split() == ["semantic", "False", "keyword", "True"]
