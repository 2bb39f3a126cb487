"""The layers hold by construction: imports flow `server → engine → analyzers`, never back up.

Every module's imports are read from its syntax tree (function-level imports too, which a
runtime check would miss), so a backwards arrow fails here before it can tangle the packages.
Code outside a package goes through its front door (`engine/__init__.py`,
`analyzers/__init__.py`), and private names (`_x`) never cross modules.
"""

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

import analyzers
import engine

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("analyzers", "engine", "server")
# What each package may import from knowhow; anything else is an arrow in the wrong direction.
ALLOWED = {
    "analyzers": {"analyzers"},
    "engine": {"engine", "analyzers"},
    "server": {"server", "engine", "analyzers"},
}


def modules() -> Iterator[tuple[str, Path]]:
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" not in path.parts:
                yield package, path


def imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
    """(line, imported module, imported names) for every import statement, at any depth."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.lineno, node.module, [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            pytest.fail(f"{path.relative_to(ROOT)}:{node.lineno}: relative import; spell it out")


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_imports_flow_server_engine_analyzers() -> None:
    wrong = [
        f"{where(path, line)}: {package} imports {module}"
        for package, path in modules()
        for line, module, _ in imports(path)
        if module.split(".")[0] in PACKAGES and module.split(".")[0] not in ALLOWED[package]
    ]
    assert wrong == []


def test_other_packages_use_the_front_door() -> None:
    """`server` imports `engine`, never `engine.search`: the engine's inside can move freely."""
    wrong = [
        f"{where(path, line)}: {module} (import it from {module.split('.')[0]})"
        for package, path in modules()
        for line, module, _ in imports(path)
        if "." in module and module.split(".")[0] in PACKAGES and module.split(".")[0] != package
    ]
    assert wrong == []


def test_private_names_stay_in_their_module() -> None:
    wrong = [
        f"{where(path, line)}: {name} from {module}"
        for _, path in modules()
        for line, module, names in imports(path)
        if module.split(".")[0] in PACKAGES
        for name in names
        if name.startswith("_")
    ]
    assert wrong == []


def used_from_outside(package: str) -> set[str]:
    """The names other packages import from `package`'s front door."""
    return {
        name
        for importer, path in modules()
        if importer != package
        for _, module, names in imports(path)
        if module == package
        for name in names
    }


def test_front_doors_export_only_what_they_list() -> None:
    for package in (engine, analyzers):
        missing = used_from_outside(package.__name__) - set(package.__all__)
        assert missing == set(), f"{package.__name__}: add to __all__"
        assert all(hasattr(package, name) for name in package.__all__)


def test_engine_front_door_is_exactly_what_the_server_uses() -> None:
    """The engine's public surface is pinned to its use: a name the server stops importing
    leaves `__all__` (and so stays free to change), and `__all__` stays sorted to read."""
    assert set(engine.__all__) == used_from_outside("engine")
    assert engine.__all__ == sorted(engine.__all__)
