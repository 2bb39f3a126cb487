"""An index in a folder the server cannot write (a read-only mount: a CI artifact, a shared
volume) is served as it is, and status says "read-only".

Before, its manifest (SQLite in WAL mode) could not be opened and Tantivy could not create the
lock file it takes even to read: every search answered MM_INDEX_UNAVAILABLE "a running knowhow
server rebuilds it", which can never happen there, and status said "stalled".

The folder is made read-only the way a process meets it: files and folders without write
permission, read by a process that has none. Tests run as root in CI, where permissions stop
nothing, so there the reading process runs as root without the capabilities that override
permissions (`setpriv`, util-linux): it owns the files, and their modes stop it. A read-only
mount answers the same calls with EROFS instead of EACCES (`os.access` says "not writable"
for both); it needs a mount namespace CI may not have, so it is not what this test uses.
"""

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import Knowledge

REPO = Path(__file__).resolve().parents[2]

NO_OVERRIDE = ["setpriv", "--bounding-set", "-dac_override,-dac_read_search", "--"]
"""Root without the capabilities that let it write where file modes say no."""
PROBE = """
import json, sys
from pathlib import Path
from engine import KnowledgeEngine, KnowledgeStore, LiveIndex, SearchInput
from server.index_status import index_status
root, index = Path(sys.argv[1]), Path(sys.argv[2])
engine = KnowledgeEngine(root, index)
try:
    page = engine.search(SearchInput(query="send", scope="all", limit=5))
    found = [r.stepId for r in page.steps()]
except Exception as exc:
    found = f"{type(exc).__name__}: {exc}"
live = LiveIndex(KnowledgeStore(root), index, retry_seconds=0.1)
started = live.start(wait=20)
status = index_status(live, engine)
live.close()
print(json.dumps({"found": found, "started": started, "health": status.health,
                  "reason": status.healthReason, "documents": status.documents}))
"""


def unwritable(base: Path) -> None:
    """Every folder r-x and every file r-- for everyone, from `base` down."""
    for folder, _dirs, files in os.walk(base):
        for name in files:
            os.chmod(Path(folder) / name, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
    for folder, _dirs, _files in os.walk(base, topdown=False):
        os.chmod(folder, 0o555)


@pytest.fixture
def read_only_copy(kb: Knowledge) -> Iterator[Path]:
    """The indexed root and its index, copied to a folder nobody may write."""
    kb.session("mm-ro-a", goal="Send ETH")
    kb.step("mm-ro-a", test_id="coin-overview-send")
    kb.step("mm-ro-a", test_id="send-amount-input", text="0.1")
    kb.index()
    place = Path(tempfile.mkdtemp(prefix="knowhow-ro-test-"))
    shutil.copytree(kb.root, place / "root")
    shutil.copytree(kb.index_dir, place / "index")
    unwritable(place / "root")
    unwritable(place / "index")
    try:
        yield place
    finally:
        for folder, _dirs, _files in os.walk(place):
            os.chmod(folder, 0o755)
        shutil.rmtree(place)


def probe(place: Path) -> dict[str, object]:
    """What a process that cannot write `place` finds there (the PROBE script's answer)."""
    prefix: list[str] = []
    if os.geteuid() == 0:
        if shutil.which("setpriv") is None or subprocess.run([*NO_OVERRIDE, "true"]).returncode:
            pytest.skip("root that cannot drop CAP_DAC_OVERRIDE: file modes cannot stop it")
        prefix = NO_OVERRIDE
    command = [*prefix, sys.executable, "-c", PROBE, str(place / "root"), str(place / "index")]
    done = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_a_read_only_index_is_searched_and_status_says_read_only(read_only_copy: Path) -> None:
    before = sorted(p.name for p in (read_only_copy / "index").rglob("*"))
    answer = probe(read_only_copy)
    assert isinstance(answer["found"], list), answer["found"]
    assert "mm-ro-a/0001-mm_click" in answer["found"]
    assert answer["started"] is True
    assert answer["health"] == "read-only"
    assert "read-only" in str(answer["reason"]) and "not indexed" in str(answer["reason"])
    assert answer["documents"] == {"steps": 2, "sessions": 1}
    assert sorted(p.name for p in (read_only_copy / "index").rglob("*")) == before
