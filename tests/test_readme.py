"""The README's CLI examples work as written on the data `make run` installs (issue 9 item 1).

`knowhow demo` (what `make run` runs) copies the bundled sample into an empty
`test-artifacts/llm-knowledge` and indexes it into `index-data`; then every `$ knowhow …` line of
the README is run there, with the defaults a new user gets, and its claim — the comment after
it, or the output line below it — is checked. A new example without a check here fails the test,
so the README cannot grow an example nobody ran.
"""

import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from engine.semantic import EMBED_TIMEOUT_ENV

pytestmark = pytest.mark.slow

README = Path(__file__).parents[1] / "README.md"
KNOWHOW = Path(sys.executable).parent / "knowhow"
SMOKE_SESSION = "mm-mkloz4er-qm7hc5"  # the sample's only session tagged `smoke`


def examples() -> list[tuple[str, str]]:
    """(`knowhow …` command, the README line below it) of every `$ knowhow` line."""
    lines = README.read_text(encoding="utf-8").splitlines()
    found = []
    for number, line in enumerate(lines):
        if line.startswith("$ knowhow "):
            command = line.removeprefix("$ ").split("  #", 1)[0].strip()
            below = lines[number + 1] if number + 1 < len(lines) else ""
            found.append((command, below))
    return found


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
    # the README shows the value of `.result.results[0].matchedFields`, its tail elided (…)
    fields = search_results(output)[0]["matchedFields"]
    first = json.loads(shown.replace(", …]", "]"))
    assert fields[: len(first)] == first


def check_summary(text: str, _: str) -> None:
    assert text.startswith("mm-mlfgj375-eoid2h")
    assert "screens: unlock → home → swap" in text
    assert "✓ mm_click on home: testId:coin-overview-swap" in text
    assert "recovered by" in text
    assert "selector: " not in text and "selector:\n" not in text  # no empty selector


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


CHECKS: dict[str, Callable[[Any, str], None]] = {
    'knowhow search "sned eth" --tag smoke --ok -k 3': check_typo_search,
    "knowhow search coin-overview-send --json | jq '.result.results[0].matchedFields'": (
        check_matched_fields
    ),
    "knowhow summarize mm-mlfgj375-eoid2h": check_summary,
    "knowhow last -n 5 --scope all --failed": check_failed_steps,
    "knowhow sessions --tag smoke": check_sessions,
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
    """A README command line, run by the venv's `knowhow` with a new user's environment."""
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


def test_every_readme_example_has_a_check() -> None:
    commands = [command for command, _ in examples()]
    assert commands, "no `$ knowhow` examples found in README.md"
    assert sorted(commands) == sorted(CHECKS)


@pytest.mark.parametrize(("command", "below"), examples())
def test_the_readme_example_does_what_it_says(made_run: Path, command: str, below: str) -> None:
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
