"""Every script under `scripts/` still imports: the scripts are not type-checked, so a name the
code moved (a function renamed, a module split) would otherwise surface only when someone runs
the benchmark, weeks later."""

import importlib
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


@pytest.mark.parametrize("script", sorted(p.stem for p in SCRIPTS.glob("*.py")))
def test_script_imports(script: str) -> None:
    importlib.import_module(script)  # `scripts/` is on pytest's pythonpath
