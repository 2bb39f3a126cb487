"""Output as docs/cli.md describes it: piped `timeline` and `summarize` are a `# title` line and
tab-separated columns, an 80-column terminal still shows a search's match evidence, counts read
as English. Through the same `run` the `knowhow` script uses, on a real root and index."""

import io
from collections.abc import Callable
from pathlib import Path

import pytest

from server.cli import render
from server.cli.commands import run
from server.cli.served import TerminalBuffer
from tests.conftest import Knowledge

SESSION = "mm-output-check-1"

Knowhow = Callable[..., tuple[int, str]]


@pytest.fixture
def knowhow(kb: Knowledge) -> Knowhow:
    kb.session(SESSION, goal="Send 0.1 ETH", flow_tags=["send"])
    kb.step(SESSION, "mm_describe_screen", screen="home", test_ids=["coin-overview-send"])
    kb.step(SESSION, test_id="coin-overview-send", screen="home")
    kb.step(SESSION, test_id="send-continue", ok=False, screen="send", error=("MM_X", "slow"))
    kb.step(SESSION, test_id="send-continue", screen="confirm")
    kb.index()

    def call(*args: str, tty: bool = False, width: int = 80) -> tuple[int, str]:
        where = ["--root", str(kb.root), "--index", str(kb.index_dir)]
        stdout = TerminalBuffer(tty)
        with render.printing_to(stdout, io.StringIO(), width):
            code = run([*args, *where])
        return code, stdout.getvalue()

    return call


def test_a_piped_timeline_is_a_title_line_and_tab_separated_columns(knowhow: Knowhow) -> None:
    code, text = knowhow("timeline", f"{SESSION}/0002-mm_click", "-B", "1", "-A", "1")
    lines = text.splitlines()
    assert code == 0 and lines[0] == f"# timeline around {SESSION}/0002-mm_click"
    assert lines[1].split("\t")[:3] == ["anchor", "time", "step"]
    marked = [line.split("\t") for line in lines[2:5]]
    assert [row[0] for row in marked] == ["", "▶", ""]
    assert marked[1][2] == f"{SESSION}/0002-mm_click"
    assert "# sessions" in lines


def test_a_piped_summary_is_a_title_line_and_tab_separated_columns(knowhow: Knowhow) -> None:
    code, text = knowhow("summarize", SESSION)
    lines = text.splitlines()
    assert code == 0 and lines[0].startswith(f"# {SESSION} ") and "Send 0.1 ETH" in lines[0]
    assert lines[1].split("\t")[:4] == ["ok", "batch", "tool", "screen"]
    failed = next(line.split("\t") for line in lines if line.startswith("✗"))
    assert (failed[2], failed[4], failed[6]) == ("mm_click", "testId:send-continue", "MM_X")


def test_an_80_column_terminal_keeps_the_match_evidence(knowhow: Knowhow) -> None:
    code, text = knowhow("search", "send continue", tty=True, width=80)
    assert code == 0 and "match:" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    wide = knowhow("search", "send continue", tty=True, width=200)[1]
    assert "match:" in wide and "┃" in wide  # wide enough: still the table


def test_indexing_one_session_says_one_session(knowhow: Knowhow) -> None:
    code, text = knowhow("reindex")
    assert code == 0 and "in 1 session (" in text


def test_a_folder_of_other_folders_is_not_a_knowledge_root(tmp_path: Path) -> None:
    etc = tmp_path / "etc"
    for name in ("apt.conf.d", "ssh", "cron-daily"):
        (etc / name).mkdir(parents=True)
        (etc / name / "settings.conf").write_text("x = 1\n")
    index = tmp_path / "index"
    errors = io.StringIO()
    with render.printing_to(TerminalBuffer(False), errors, 80):
        code = run(["index", "--root", str(etc), "--index", str(index)])
    assert code == 2 and not index.exists()
    assert errors.getvalue().count("\n") == 1 and "is not a knowledge root" in errors.getvalue()
    (etc / "mm-real-session-1" / "steps").mkdir(parents=True)  # one session folder: a root
    with render.printing_to(TerminalBuffer(False), io.StringIO(), 80):
        assert run(["index", "--root", str(etc), "--index", str(index)]) == 0
