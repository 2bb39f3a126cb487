"""The CLI examples of the README and of docs/cli.md work as written on the data `make run`
installs.

`knowhow demo` (what `make run` runs) copies the bundled sample into an empty
`test-artifacts/llm-knowledge` and indexes it into `index-data`; then every `$ knowhow …` line of
those documents is run there, with the defaults a new user gets, and its claim — the comment
after it, or the output line below it — is checked. A new example without a check here fails the
test, so the documents cannot grow an example nobody ran. Examples that change the knowledge or
the index (`supersede`, `reindex`) run on a copy of that folder, so the others see the sample as
installed.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.meaning import EMBED_TIMEOUT_ENV

pytestmark = pytest.mark.slow

REPO = Path(__file__).parents[1]
DOCUMENTS = (REPO / "README.md", REPO / "docs" / "cli.md")
KNOWHOW = Path(sys.executable).parent / "knowhow"
SMOKE_SESSION = "mm-mkloz4er-qm7hc5"  # the sample's only session tagged `smoke`
SWAP_SESSION = "mm-mlfgj375-eoid2h"
CONNECT_SESSION = "mm-mm9ikvfm-w90odu"
CHANGES_THE_ROOT = ("supersede", "reindex")
"""Subcommands whose examples run on a copy of the demo folder."""


def examples() -> list[tuple[str, str]]:
    """(`knowhow …` command, the line below it) of every `$ knowhow` line of the documents; an
    example shown in more than one of them is run once."""
    found: dict[str, str] = {}
    for document in DOCUMENTS:
        lines = document.read_text(encoding="utf-8").splitlines()
        for number, line in enumerate(lines):
            if line.startswith("$ knowhow "):
                command = line.removeprefix("$ ").split("  #", 1)[0].strip()
                below = lines[number + 1] if number + 1 < len(lines) else ""
                found.setdefault(command, below)
    return list(found.items())


def search_results(output: dict[str, Any]) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = output["result"]["results"]
    return results


def check_typo_search(output: dict[str, Any], _: str) -> None:
    results = search_results(output)
    assert 0 < len(results) <= 3
    for result in results:
        assert result["ok"] is True
        assert result["sessionId"] == SMOKE_SESSION
        assert any("send" in field.lower() for field in result["matchedFields"])


def check_matched_fields(output: dict[str, Any], shown: str) -> None:
    # the document shows the value of `.result.results[0].matchedFields`, its tail elided (…)
    fields = search_results(output)[0]["matchedFields"]
    first = json.loads(shown.replace(", …]", "]"))
    assert fields[: len(first)] == first


def check_up_to_date(output: dict[str, Any], _: str) -> None:
    result = output["result"]
    assert result["sessionsUnchanged"] == 5
    assert result["sessionsIndexed"] == result["steps"] == 0


def check_rebuilt(output: dict[str, Any], shown: str) -> None:
    result = output["result"]
    assert result["sessionsIndexed"] == int(shown) and result["skipped"] == []


def check_by_meaning(output: dict[str, Any], _: str) -> None:
    assert output["result"]["modeUsed"] == "hybrid"
    first = search_results(output)[0]
    assert first["screen"] == "unlock" and first["tool"] == "mm_type"
    assert first["matchType"] == "semantic"


def check_by_words(output: dict[str, Any], _: str) -> None:
    assert output["result"]["modeUsed"] == "keyword"
    first = search_results(output)[0]
    assert first["matchedFields"] == ["testId:open-recipient-modal-btn"]


def check_workflows(output: dict[str, Any], _: str) -> None:
    sessions = search_results(output)
    assert 0 < len(sessions) <= 2
    assert all(row["type"] == "session" for row in sessions)
    assert sessions[0]["sessionId"] == SWAP_SESSION
    assert "swap" in sessions[0]["screens"] and sessions[0]["matchedSteps"]


def check_connect_tail(output: dict[str, Any], _: str) -> None:
    steps = output["result"]["steps"]
    assert [s["sessionId"] for s in steps] == [CONNECT_SESSION] * 3
    assert steps[-1]["tool"] == "mm_cleanup"
    assert [s["timestamp"] for s in steps] == sorted(s["timestamp"] for s in steps)


def check_around_confirm(output: dict[str, Any], _: str) -> None:
    line = output["result"]
    assert line["anchor"]["stepId"] == f"{SWAP_SESSION}/0051-mm_click"
    assert line["anchor"]["target"]["testId"] == "confirm-footer-button"
    assert [s["stepId"] for s in line["before"]] == [
        f"{SWAP_SESSION}/0049-mm_click",
        f"{SWAP_SESSION}/0050-mm_describe_screen",
    ]
    assert [s["stepId"] for s in line["after"]] == [f"{SWAP_SESSION}/0052-mm_list_testids"]


def check_status(output: dict[str, Any], _: str) -> None:
    status = output["result"]
    assert status["health"] == "ok" and status["sessionsOnDisk"] == 5
    assert status["indexLag"]["pendingSessions"] == 0


def check_client_command(output: dict[str, Any], _: str) -> None:
    command = output["result"]["clients"]["claude-code"]["command"]
    assert command.startswith(f"claude mcp add knowhow -- {KNOWHOW} serve --root /")


def check_superseded(output: dict[str, Any], shown: str) -> None:
    result = output["result"]
    assert shown == f"{result['stepId']} superseded (…)"
    assert result["isSuperseded"] is True and result["source"] == "explicit"
    assert result["reason"] == "the token list has no swap button any more"


def check_summary(text: str, _: str) -> None:
    """The recipe piped: a `# ` line, then tab-separated columns."""
    assert text.startswith(f"# {SWAP_SESSION} ")
    assert "screens: unlock → home → swap" in text
    assert "✓\t\tmm_click\thome\ttestId:coin-overview-swap\t" in text
    assert "recovered by" in text
    assert "\tselector:\t" not in text  # no empty selector


def check_failed_steps(output: dict[str, Any], _: str) -> None:
    steps = output["result"]["steps"]
    assert len(steps) == 5
    assert not any(step["ok"] for step in steps)
    assert [s["timestamp"] for s in steps] == sorted(s["timestamp"] for s in steps)
    assert len({s["sessionId"] for s in steps}) > 1  # --scope all


def check_sessions(text: str, _: str) -> None:
    assert "sessions (1 in all)" in text
    row = next(line for line in text.splitlines() if SMOKE_SESSION in line)
    for value in ("sign", "smoke", "fix/onboarding-terms-of-use@0f7d6d5", "smoke test", "54"):
        assert value in row


def check_screen_duplicates(output: dict[str, Any], _: str) -> None:
    groups = output["result"]["groups"]
    assert 0 < len(groups) <= 3
    for group in groups:
        assert group["type"] == "screen" and group["count"] >= 2
        assert group["text"] and group["examples"]
    assert [g["count"] for g in groups] == sorted((g["count"] for g in groups), reverse=True)


def check_session_clusters(output: dict[str, Any], _: str) -> None:
    clusters = output["result"]["clusters"]
    assert len(clusters) == 3
    # four of the five sessions have a goal or flowTags (a text); the fifth has no session.json
    assert sum(c["size"] for c in clusters) == output["result"]["memories"] == 4
    assert all(c["topTerms"] and c["examples"] for c in clusters)


VAULT = '"open the vault with my secret" -k 3'
CHECKS: dict[str, Callable[[Any, str], None]] = {
    "knowhow index": check_up_to_date,
    "knowhow status": check_status,
    "knowhow mcp-config --json | jq '.result.clients.\"claude-code\".command'": (
        check_client_command
    ),
    "knowhow reindex --json | jq '.result.sessionsIndexed'": check_rebuilt,
    'knowhow search "sned eth" --tag smoke --ok -k 3': check_typo_search,
    "knowhow search coin-overview-send --json | jq '.result.results[0].matchedFields'": (
        check_matched_fields
    ),
    f"knowhow search {VAULT}": check_by_meaning,
    f"knowhow search {VAULT} --mode keyword": check_by_words,
    'knowhow search "confirm the swap" --type session -k 2': check_workflows,
    "knowhow summarize mm-mlfgj375-eoid2h": check_summary,
    "knowhow last -n 5 --scope all --failed": check_failed_steps,
    "knowhow last -n 3 --scope mm-mm9ikvfm-w90odu": check_connect_tail,
    "knowhow sessions --tag smoke": check_sessions,
    "knowhow timeline mm-mlfgj375-eoid2h/0051-mm_click -B 2 -A 1": check_around_confirm,
    'knowhow supersede mm-mlfgj375-eoid2h/0022-mm_click --reason "the token list has no swap '
    'button any more"': check_superseded,
    "knowhow duplicates --type screen -k 3": check_screen_duplicates,
    "knowhow cluster --type session -n 3": check_session_clusters,
}


@pytest.fixture(scope="module")
def made_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder where `knowhow demo` ran (as `make run` does, without serving)."""
    here = tmp_path_factory.mktemp("fresh-clone")
    done = run(here, "knowhow demo")
    assert "copied the bundled sample sessions" in done.stdout
    return here


def run(cwd: Path, command: str) -> subprocess.CompletedProcess[str]:
    """A documented command line, run by the venv's `knowhow` with a new user's environment."""
    args = re.findall(r"'[^']*'|\"[^\"]*\"|\S+", command)
    args = [a[1:-1] if a[0] in "'\"" else a for a in args]
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("KNOWHOW_") or k == EMBED_TIMEOUT_ENV  # a loaded machine: see conftest
    }
    return subprocess.run(
        [str(KNOWHOW), *args[1:]], cwd=cwd, env=env, capture_output=True, text=True, timeout=300
    )


def test_every_example_has_a_check() -> None:
    commands = [command for command, _ in examples()]
    assert commands, "no `$ knowhow` examples found in the documents"
    assert sorted(commands) == sorted(CHECKS)


@pytest.mark.parametrize(("command", "below"), examples())
def test_the_example_does_what_it_says(
    made_run: Path, tmp_path: Path, command: str, below: str
) -> None:
    if command.split()[1] in CHANGES_THE_ROOT:
        made_run = Path(shutil.copytree(made_run, tmp_path / "copy"))
    program, _, jq_path = command.partition(" | jq ")
    as_json = "--json" in program.split()
    if jq_path:  # jq is not part of knowhow: the test reads the JSON itself
        assert jq_path.strip("'").startswith(".result.")
    done = run(made_run, program if as_json else program + " --json")
    assert done.returncode == 0, done.stderr
    output = json.loads(done.stdout)
    assert output["ok"] is True
    check = CHECKS[command]
    if check in (check_summary, check_sessions):  # claims about the human-readable output
        human = run(made_run, program)
        assert human.returncode == 0, human.stderr
        check(human.stdout, below)
    else:
        check(output, below)
