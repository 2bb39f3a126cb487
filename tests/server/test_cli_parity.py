"""The CLI says what the tools say: `knowhow status` is `mm_knowledge_status`, search and last take
`--include-superseded` and search `--min-salience`, `--version` names the installed version; a
`--root` the index was not built from is refused, naming the root it holds; and piped output is
plain tab-separated lines, not a table drawn for a terminal.
"""

import shutil
from importlib.metadata import version
from pathlib import Path
from typing import Any

import pytest

from tests.server.first_hour import (
    SAMPLE_RELATIVE_ROOT,
    SEND_SESSION,
    knowhow,
    knowhow_json,
    made_run,
)

pytestmark = pytest.mark.slow
BOX = set("┏┓┗┛┃━│─┡┩╇┳┻╋")


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_run(tmp_path_factory.mktemp("clone"))


def result(clone: Path, *args: str) -> Any:
    answer = knowhow_json(clone, *args)
    assert answer["ok"] is True, answer
    return answer["result"]


def test_status_is_the_index_health_the_tool_reports(clone: Path) -> None:
    status = result(clone, "status")
    assert status["sessionsOnDisk"] == 5 and status["health"] == "ok"
    assert status["documents"]["steps"] > 0 and "indexLag" in status
    done = knowhow(clone, "status")
    assert done.returncode == 0 and "health" in done.stdout and "ok" in done.stdout


def test_version_is_the_installed_distribution_version() -> None:
    done = knowhow(Path.cwd(), "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["knowhow", version("knowhow-mcp")]


def test_search_and_last_show_superseded_steps_when_asked(tmp_path: Path) -> None:
    clone = made_run(tmp_path)
    first = result(clone, "search", "send", "--scope", SEND_SESSION, "-k", "1")["results"][0]
    step_id = first["stepId"]
    superseded = result(clone, "supersede", step_id, "--reason", "button renamed")
    assert superseded
    assert knowhow(clone, "index").returncode == 0
    hidden = result(clone, "search", "send", "--scope", SEND_SESSION, "-k", "100")
    assert step_id not in {r["stepId"] for r in hidden["results"]}
    shown = result(
        clone, "search", "send", "--scope", SEND_SESSION, "-k", "100", "--include-superseded"
    )
    flagged = next(r for r in shown["results"] if r["stepId"] == step_id)
    assert flagged["isSuperseded"] is True and flagged["supersededReason"] == "button renamed"
    last = result(clone, "last", "-n", "200", "--scope", SEND_SESSION, "--include-superseded")
    assert step_id in {s["stepId"] for s in last["steps"]}
    last = result(clone, "last", "-n", "200", "--scope", SEND_SESSION)
    assert step_id not in {s["stepId"] for s in last["steps"]}


def test_min_salience_keeps_only_steps_that_salient_at_least(clone: Path) -> None:
    every = result(clone, "search", "send", "-k", "100")
    assert every["total"] > 0
    kept = result(clone, "search", "send", "-k", "100", "--min-salience", "0.2")
    assert kept["total"] <= every["total"]
    assert all(r["salience"] >= 0.2 for r in kept["results"])
    refused = knowhow_json(clone, "search", "send", "--min-salience", "2")
    assert refused["error"]["code"] == "MM_INVALID_INPUT"
    assert refused["error"]["message"].startswith("minSalience")


def test_a_root_that_does_not_exist_is_refused(clone: Path) -> None:
    missing = clone / "nowhere"
    answer = knowhow_json(clone, "search", "send", "--root", str(missing))
    assert answer["ok"] is False and answer["error"]["code"] == "MM_NOT_FOUND"
    assert str(missing) in answer["error"]["message"]


def test_an_index_built_from_another_root_is_refused_naming_its_root(clone: Path) -> None:
    other = clone / "other-root"
    shutil.copytree(clone / SAMPLE_RELATIVE_ROOT / SEND_SESSION, other / SEND_SESSION)
    for command in (["search", "send"], ["last", "--scope", "all"], ["sessions"], ["status"]):
        answer = knowhow_json(clone, *command, "--root", str(other))
        assert answer["ok"] is False, (command, answer)
        message = answer["error"]["message"]
        assert str((clone / SAMPLE_RELATIVE_ROOT).resolve()) in message, message
        assert str(other) in message and "--index" in message
    # the index of that root, once built, answers
    answer = knowhow_json(clone, "index", "--root", str(other), "--index", str(clone / "ix2"))
    assert answer["ok"] is True
    found = result(clone, "search", "send", "--root", str(other), "--index", str(clone / "ix2"))
    assert {r["sessionId"] for r in found["results"]} == {SEND_SESSION}


def test_indexing_another_root_into_an_index_rebuilds_it_for_that_root(tmp_path: Path) -> None:
    clone = made_run(tmp_path)
    other = clone / "other-root"
    shutil.copytree(clone / SAMPLE_RELATIVE_ROOT / SEND_SESSION, other / SEND_SESSION)
    rebuilt = result(clone, "index", "--root", str(other))
    assert str((clone / SAMPLE_RELATIVE_ROOT).resolve()) in rebuilt["rebuiltBecause"]
    assert rebuilt["sessionsIndexed"] == 1
    found = result(clone, "search", "send", "--root", str(other))
    assert {r["sessionId"] for r in found["results"]} == {SEND_SESSION}


@pytest.mark.parametrize(
    "command",
    [
        ["search", "send", "-k", "3"],
        ["last", "-n", "3", "--scope", "all"],
        ["sessions"],
        ["duplicates", "--type", "screen", "-k", "2"],
        ["cluster", "--type", "session", "-n", "2"],
        ["status"],
    ],
)
def test_piped_output_is_plain_tab_separated_lines(clone: Path, command: list[str]) -> None:
    done = knowhow(clone, *command)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines and not BOX & set(done.stdout), done.stdout[:500]
    rows = [line for line in lines if "\t" in line]
    assert rows, done.stdout[:500]
    assert "\x1b[" not in done.stdout  # no colours or cursor moves either
