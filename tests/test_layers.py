"""The layers hold by construction: imports flow `server → engine → analyzers`, never back up,
and inside `engine/` from each subpackage (a layer) only to its own or lower layers.

Every module's imports are read from its syntax tree (function-level imports too, which a
runtime check would miss), so a backwards arrow fails here before it can tangle the packages.
Code outside a package goes through its front door (`engine/__init__.py`,
`analyzers/__init__.py`); a module of one engine layer uses a lower layer through that layer's
`__init__`, and tests and scripts use the engine's front door or, to test a layer, the layer's.
Private names (`_x`) never cross modules.
"""

import ast
import graphlib
import importlib
from collections.abc import Iterator
from functools import cache
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


ENGINE_LAYERS = (
    ("core",),
    ("records",),
    ("embedding",),
    ("index",),
    ("live", "query"),
    ("meaning", "history"),
    ("search",),
)
"""engine/'s subpackages, lowest first; the layers of one tuple sit side by side and never
import each other. `engine/__init__.py`, `engine/knowledge.py` and `engine/read_cache.py`
stand on all of them."""
TIER = {layer: tier for tier, layers in enumerate(ENGINE_LAYERS) for layer in layers}
ENGINE_DOORS = {f"engine.{layer}" for layer in TIER}
ENGINE_TOP = ("__init__", "knowledge", "read_cache")
USERS = ("tests", "scripts")
"""Folders whose code uses the packages without being one of them."""


def modules(folders: tuple[str, ...] = PACKAGES) -> Iterator[tuple[str, Path]]:
    for package in folders:
        for path in sorted((ROOT / package).rglob("*.py")):
            if "node_modules" not in path.parts:
                yield package, path


def layer_of(path: Path) -> str | None:
    """The engine layer a module of `engine/` belongs to (None: on top of them all)."""
    parts = path.relative_to(ROOT / "engine").parts
    return parts[0] if len(parts) > 1 else None


@cache
def imports(path: Path) -> tuple[tuple[int, str, list[str]], ...]:
    """(line, imported module, imported names) for every import statement, at any depth."""
    return tuple(_read_imports(path))


def _read_imports(path: Path) -> Iterator[tuple[int, str, list[str]]]:
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
    """`server` imports `engine`, never `engine.search.step_search`: the engine's inside can move
    freely."""
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
        for _, path in modules(PACKAGES + USERS)
        for line, module, names in imports(path)
        if module.split(".")[0] in PACKAGES
        for name in names
        if name.startswith("_")
    ]
    assert wrong == []


def test_engine_layers_are_its_folders() -> None:
    """Every subpackage of `engine/` is a layer of the list, and only the front door and
    `KnowledgeEngine` live beside them."""
    folders = {path.parent.name for path in (ROOT / "engine").glob("*/__init__.py")}
    assert folders == set(TIER)
    assert sorted(path.stem for path in (ROOT / "engine").glob("*.py")) == sorted(ENGINE_TOP)


def test_engine_layers_import_only_their_own_or_lower_layers() -> None:
    """A module imports modules of its own layer directly (`engine.index.schema`), and a lower
    layer through its front door (`engine.core`): never a higher layer, never the layer beside
    it, never its own layer's door (which imports the layer's modules: a cycle in waiting)."""
    wrong = []
    for _, path in modules(("engine",)):
        layer = layer_of(path)
        if layer is None or path.name == "__init__.py":
            continue
        for line, module, _ in imports(path):
            parts = module.split(".")
            if parts[0] != "engine":
                continue
            target = parts[1] if len(parts) > 1 else None
            if target == layer:
                fine = len(parts) == 3
            else:
                fine = target in TIER and len(parts) == 2 and TIER[target] < TIER[layer]
            if not fine:
                wrong.append(f"{where(path, line)}: {layer} imports {module}")
    assert wrong == []


def test_tests_and_scripts_use_front_doors() -> None:
    """Tests and scripts import the engine's front door, or a layer's when they test that layer:
    never a module inside a layer, so modules can move within their layer freely."""
    wrong = [
        f"{where(path, line)}: {module}"
        for _, path in modules(USERS)
        for line, module, _ in imports(path)
        if module.split(".")[0] == "engine" and module not in {"engine", *ENGINE_DOORS}
    ]
    assert wrong == []


def used_through(door: str, folders: tuple[str, ...], outside: str) -> set[str]:
    """The names imported from the front door `door` by modules of `folders` outside the
    folder `outside`."""
    return {
        name
        for _, path in modules(folders)
        if not path.is_relative_to(ROOT / outside)
        for _, module, names in imports(path)
        if module == door
        for name in names
    }


def test_front_doors_export_only_what_they_list() -> None:
    for package in (engine, analyzers):
        used = used_through(package.__name__, PACKAGES + USERS, package.__name__)
        missing = used - set(package.__all__)
        assert missing == set(), f"{package.__name__}: add to __all__"
        assert all(hasattr(package, name) for name in package.__all__)


def test_engine_front_door_is_exactly_what_its_users_use() -> None:
    """The engine's public surface is pinned to its use by the server, the tests and the
    scripts: a name they stop importing leaves `__all__` (and so stays free to change); ruff
    keeps `__all__` sorted to read (RUF022)."""
    assert set(engine.__all__) == used_through("engine", PACKAGES + USERS, "engine")


@pytest.mark.parametrize("layer", sorted(TIER))
def test_layer_front_door_is_exactly_what_is_used_through_it(layer: str) -> None:
    """A layer's `__init__` exports exactly the names the layers above it, the front door,
    tests and scripts import from it. A test may also import one of the layer's
    modules as a whole (`from engine.index import indexer`), to set a module's constant."""
    door = importlib.import_module(f"engine.{layer}")
    folder = ROOT / "engine" / layer
    submodules = {path.stem for path in folder.glob("*.py")}
    used = used_through(door.__name__, ("engine", *USERS), f"engine/{layer}")
    assert set(door.__all__) == used - submodules
    assert all(hasattr(door, name) for name in door.__all__)
    by_engine = used_through(door.__name__, ("engine",), f"engine/{layer}")
    assert by_engine & submodules == set(), "the engine's modules import names, not modules"


def server_part(module: str) -> str:
    """The part of `server/` a module belongs to: its folder (`server.browser`), or the module
    itself when it lies in `server/` beside the folders (`server.state`)."""
    return ".".join(module.split(".")[:2])


def server_parts_imported(module: str, names: list[str]) -> set[str]:
    """The parts of `server/` an import statement uses (`from server import schemas` uses
    `server.schemas`; a name that is no module of its own comes from `server/__init__.py`)."""
    if module != "server":
        return {server_part(module)} if module.split(".")[0] == "server" else set()
    folder = ROOT / "server"
    return {
        f"server.{name}"
        if (folder / f"{name}.py").is_file() or (folder / name).is_dir()
        else "server"
        for name in names
    }


def test_server_parts_import_each_other_one_way() -> None:
    """Each folder of `server/` (and each module beside them) imports the others one way only,
    never around a circle: a folder can be read knowing only what it imports. The browser
    automation knows nothing of the state that owns its driver or of the tools that use it."""
    graph: dict[str, set[str]] = {}
    for _, path in modules(("server",)):
        dotted = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        part = server_part(dotted)
        uses = graph.setdefault(part, set())
        for _, module, names in imports(path):
            uses |= server_parts_imported(module, names) - {part}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"server/ imports around a circle: {' -> '.join(exc.args[1])}")


def test_the_transport_knows_neither_tools_nor_state() -> None:
    """`server/transport/` is how messages reach the server and what a client may cost it: it
    reads the settings and nothing else of the server, so `server.app` alone wires it."""
    used: set[str] = set()
    for _, path in modules(("server",)):
        if path.parent == ROOT / "server" / "transport":
            for _, module, names in imports(path):
                used |= server_parts_imported(module, names)
    assert used - {"server.transport"} == {"server.settings"}
