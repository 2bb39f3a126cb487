"""`knowhow demo`, the first thing `make run` does on a fresh clone: an empty root gets the bundled
sample sessions, they are indexed, and the example searches find them.

When the CLI once moved and left the sample behind, `make run` failed on every fresh clone while
the suite passed: this test runs the command as `make run` does.
"""

import re
from pathlib import Path

from typer.testing import CliRunner

from server.cli import app
from server.demo import SAMPLE_ROOT


def test_demo_on_an_empty_root_copies_the_sample_indexes_it_and_finds_it(tmp_path: Path) -> None:
    root, index = tmp_path / "knowledge", tmp_path / "index"
    result = CliRunner().invoke(app, ["demo", "--root", str(root), "--index", str(index)])
    assert result.exit_code == 0, result.output
    sample = sorted(p.name for p in SAMPLE_ROOT.iterdir() if p.is_dir())
    assert sample and sorted(p.name for p in root.iterdir() if p.is_dir()) == sample
    said = " ".join(result.output.split())  # tables wrap to the terminal's width
    assert "was empty: copied the bundled sample sessions" in said
    assert f"steps in {len(sample)} sessions" in said
    found = [int(n) for n in re.findall(r"\((\d+) in all\)", said)]
    assert found and all(n > 0 for n in found)  # every example search finds sample steps
