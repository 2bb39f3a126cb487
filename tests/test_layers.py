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

ENGINE_API = [
    "A11yHint",
    "A11yNode",
    "A11ySnapshot",
    "GitInfo",
    "IndexReader",
    "IndexStatus",
    "IndexUnavailable",
    "InvalidInput",
    "KnowhowError",
    "KnowledgeEngine",
    "KnowledgeStore",
    "LastInput",
    "LiveIndex",
    "NoActiveSession",
    "Observation",
    "Outcome",
    "PriorKnowledge",
    "Record",
    "Result",
    "ScreenContext",
    "ScreenRules",
    "ScreenState",
    "SearchInput",
    "SearchPage",
    "SessionId",
    "SessionList",
    "SessionMetadata",
    "SessionRecipe",
    "SessionsInput",
    "Settings",
    "StepError",
    "StepList",
    "StepRecord",
    "StepTarget",
    "Strict",
    "SummarizeInput",
    "SyncReport",
    "TestIdItem",
    "ToolCall",
    "atomic_create",
    "default_rules",
    "ensure_index",
    "is_secret",
    "labelled",
    "now_iso",
    "parse_time",
    "rebuild",
    "redact_step",
    "session_dir",
    "validate",
]


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


def test_engine_front_door_is_pinned() -> None:
    """Adding to the engine's public surface is a decision: make it here and in __init__.py."""
    assert engine.__all__ == ENGINE_API
    assert all(hasattr(engine, name) for name in engine.__all__)


def test_front_doors_export_only_what_they_list() -> None:
    for package in (engine, analyzers):
        used = {
            name
            for importer, path in modules()
            if importer != package.__name__
            for _, module, names in imports(path)
            if module == package.__name__
            for name in names
        }
        assert used <= set(package.__all__), f"{package.__name__}: add to __all__"
