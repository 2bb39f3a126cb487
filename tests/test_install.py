"""Installing, as a new user meets it: `make` says which Python it needs before anything else,
makes again a virtualenv an earlier attempt left with another Python, and `make run` installs
what knowhow needs to run, not the developer tools; a plain `pip install .` on an old Python
says knowhow needs Python 3.11. The distribution has a name of its own on PyPI (`knowhow` is
another project's); the command stays `knowhow`.

The Makefile is run with `VENV` pointed into a temporary folder, so the repository's own
virtualenv is never touched.
"""

import os
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import version
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
OLD_PYTHON = """#!/bin/sh
# a stand-in for a Python 3.10 interpreter: says its version, fails every version check
case "$1" in --version|-V) echo "Python 3.10.13"; exit 0;; esac
exit 1
"""


def make(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(
        ["make", "--no-print-directory", "-C", str(REPO), *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def old_python(folder: Path) -> Path:
    fake = folder / "python3.10"
    fake.write_text(OLD_PYTHON)
    fake.chmod(0o755)
    return fake


needs_make = pytest.mark.skipif(shutil.which("make") is None, reason="no make on PATH")


@needs_make
def test_make_refuses_an_old_python_before_creating_anything(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    done = make("venv", f"VENV={venv}", f"PYTHON={old_python(tmp_path)}")
    assert done.returncode != 0
    said = done.stdout + done.stderr
    assert "knowhow needs Python >= 3.11" in said and "3.10.13" in said
    assert "PYTHON=" in said  # how to choose another one
    assert not venv.exists()


@needs_make
@pytest.mark.slow
def test_a_virtualenv_left_with_another_python_is_made_again(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    shutil.copy(old_python(tmp_path), venv / "bin" / "python")
    (venv / ".installed").touch()  # an old stamp must not hide it
    done = make("venv", f"VENV={venv}", f"PYTHON={sys.executable}")
    assert done.returncode == 0, done.stdout + done.stderr
    checked = subprocess.run(
        [str(venv / "bin" / "python"), "-c", "import sys; print(sys.version_info >= (3, 11))"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert checked.stdout.strip() == "True"
    assert not (venv / ".installed").exists()
    again = make("venv", f"VENV={venv}", f"PYTHON={sys.executable}")
    assert again.returncode == 0 and "venv" not in again.stdout  # a good one is kept


@needs_make
def test_make_run_installs_knowhow_without_the_developer_tools(tmp_path: Path) -> None:
    planned = make("-n", "-B", "run", f"VENV={tmp_path / 'venv'}")
    assert planned.returncode == 0, planned.stderr
    installs = [line for line in planned.stdout.splitlines() if "pip install" in line]
    assert installs and not any("[dev]" in line for line in installs), installs
    tested = make("-n", "-B", "test", f"VENV={tmp_path / 'venv'}")
    assert any("[dev]" in line for line in tested.stdout.splitlines() if "pip install" in line)


def python_310() -> Path | None:
    """A working Python 3.10 interpreter, if this machine has one."""
    candidates = [
        shutil.which("python3.10"),
        *map(str, Path("/").glob("root/.pyenv/versions/3.10*/bin/python3.10")),
    ]
    for candidate in filter(None, candidates):
        works = subprocess.run([candidate, "-c", "pass"], capture_output=True)
        if works.returncode == 0:
            return Path(candidate)
    return None


@pytest.mark.slow
def test_pip_install_on_python_3_10_says_it_needs_3_11(tmp_path: Path) -> None:
    python = python_310()
    if python is None:
        pytest.skip("no Python 3.10 on this machine to try `pip install .` with")
    venv = tmp_path / "py310"
    subprocess.run([str(python), "-m", "venv", str(venv)], check=True)
    done = subprocess.run(
        [str(venv / "bin" / "pip"), "install", "--no-deps", "--no-build-isolation", str(REPO)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode != 0
    assert "knowhow needs Python >= 3.11" in done.stdout + done.stderr


def test_the_distribution_has_a_name_of_its_own_and_the_command_stays_knowhow() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["name"] == "knowhow-mcp"
    assert project["scripts"] == {"knowhow": "server.cli.entry:main"}
    knowhow = Path(sys.executable).with_name("knowhow")
    done = subprocess.run([str(knowhow), "--version"], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["knowhow", version("knowhow-mcp")]
    assert "uvx --from /abs/knowhow-clone knowhow serve" in (REPO / "README.md").read_text()
