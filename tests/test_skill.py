"""The agent skill (`skills/knowhow/SKILL.md`) for agents that prefer a CLI to MCP: its metadata
follows the Agent Skills format, and every `$ knowhow …` example in it runs on the data
`make run` installs and answers with something, in the envelope.
"""

import json
import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.server.first_hour import knowhow, made_run

pytestmark = pytest.mark.slow
REPO = Path(__file__).resolve().parents[1]
SKILL = REPO / "skills" / "knowhow" / "SKILL.md"


def front_matter() -> dict[str, str]:
    text = SKILL.read_text(encoding="utf-8")
    match = re.match(r"---\n(.*?)\n---\n", text, flags=re.S)
    assert match, "SKILL.md starts with YAML front matter"
    meta: dict[str, str] = yaml.safe_load(match[1])
    return meta


def examples() -> list[str]:
    """Each `$ knowhow …` line, its comment cut (none when there is no SKILL.md yet)."""
    lines = SKILL.read_text(encoding="utf-8").splitlines() if SKILL.exists() else []
    return [
        line.removeprefix("$ ").split("  #", 1)[0].strip()
        for line in lines
        if line.startswith("$ knowhow ")
    ]


def test_the_skill_says_its_name_and_when_to_use_it() -> None:
    meta = front_matter()
    assert meta["name"] == SKILL.parent.name == "knowhow"
    assert 20 < len(meta["description"]) <= 1024
    assert len(SKILL.read_text(encoding="utf-8").splitlines()) < 500


def test_the_skill_shows_each_reading_command() -> None:
    shown = {shlex.split(command)[1] for command in examples()}
    assert {"search", "last", "summarize", "timeline"} <= shown


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return made_run(tmp_path_factory.mktemp("clone"))


@pytest.mark.parametrize("command", examples())
def test_every_skill_example_answers_with_something(clone: Path, command: str) -> None:
    args = shlex.split(command)[1:]
    if "--json" not in args:
        args.append("--json")
    done = knowhow(clone, *args)
    assert done.returncode == 0, (command, done.stdout, done.stderr)
    answer = json.loads(done.stdout)
    assert answer["ok"] is True, answer
    result = answer["result"]
    assert result, command
    for key in ("results", "steps", "sessions", "screens"):
        assert result.get(key, True), (command, key)
    if "total" in result:
        assert result["total"] > 0, command
