"""A bad KNOWHOW_SYNONYMS file stops `knowhow serve` and the CLI with one line naming the file
and what is wrong with it (exit status 2), never a traceback; an endless file (/dev/zero) is
refused after a bounded read instead of read until memory runs out."""

import os
import resource
import subprocess
from pathlib import Path

import pytest

from explorer import knowhow_command

pytestmark = pytest.mark.slow

ADDRESS_SPACE = 4 << 30
"""The commands run with at most this much address space, so that reading /dev/zero without
a bound fails fast (MemoryError) instead of taking the machine's memory."""


def bounded_memory() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_SPACE, ADDRESS_SPACE))


def knowhow(
    synonyms: Path, *args: str, root: Path, index: Path
) -> subprocess.CompletedProcess[str]:
    root.mkdir(exist_ok=True)
    env = {**os.environ, "KNOWHOW_SYNONYMS": str(synonyms), "COLUMNS": "1000"}
    return subprocess.run(
        [*knowhow_command(), *args, "--root", str(root), "--index", str(index)],
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=bounded_memory,
        check=False,
    )


def assert_one_line_naming(done: subprocess.CompletedProcess[str], *words: str) -> None:
    assert done.returncode == 2, done.stderr[-2000:]
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr[-2000:]
    for word in words:
        assert word in lines[0]


@pytest.mark.parametrize(
    ("command", "content", "fault"),
    [
        (("serve",), b'{"groups": [["send", "transfer"]', "JSON"),
        (("search", "send"), b'{"groups": [["send", 1]]}', "synonym group"),
        (("search", "send"), b"[1, 2]", "must look like"),
    ],
)
def test_a_malformed_synonyms_file_is_one_line_naming_it(
    tmp_path: Path, command: tuple[str, ...], content: bytes, fault: str
) -> None:
    synonyms = tmp_path / "my-synonyms.json"
    synonyms.write_bytes(content)
    done = knowhow(synonyms, *command, root=tmp_path / "root", index=tmp_path / "index")
    assert_one_line_naming(done, str(synonyms), fault)


def test_an_endless_synonyms_file_is_refused_after_a_bounded_read(tmp_path: Path) -> None:
    done = knowhow(Path("/dev/zero"), "serve", root=tmp_path / "root", index=tmp_path / "index")
    assert_one_line_naming(done, "/dev/zero", "larger than")
