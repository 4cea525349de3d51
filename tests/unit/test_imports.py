"""Import hygiene of the first-party code, checked statically over every module's AST.

No import cycles between first-party modules (a package ``__init__`` counts as its own module, so
a submodule importing names through its package while that package imports it is a cycle too),
none between first-party folders either (``lgos.runtime`` importing ``lgos.interrupts`` while
``lgos.interrupts`` imports ``lgos.runtime`` is one, whichever modules do it), and neither the
packages nor ``scripts/`` ever import ``tests``.
"""

from __future__ import annotations

import ast
import gc
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCE_ROOTS = [
    *sorted(ROOT.glob("services/*/src")),
    ROOT / "graphs" / "src",
    ROOT / "gateways" / "src",
    ROOT / "ui" / "client" / "src",
    ROOT / "ui" / "chainlit",
    ROOT / "scripts" / "dev-stack" / "src",
    ROOT,  # scripts/: a namespace package (``python -m scripts.<name>``)
]
PACKAGES = (
    "lgos",
    "offline_model",
    "files_service",
    "lgos_demo_graphs",
    "lgos_gateways",
    "lgos_ui",
    "lgos_chainlit",
    "service_kit",
    "lgos_stack",
)


def module_files() -> dict[str, Path]:
    modules: dict[str, Path] = {}
    for source in SOURCE_ROOTS:
        for package in (*PACKAGES, "scripts"):
            base = source / package
            if not (base / "__init__.py").exists() and base != ROOT / "scripts":
                continue
            for path in sorted(base.rglob("*.py")):
                if any(root in path.parents for root in SOURCE_ROOTS if source in root.parents):
                    continue  # a source root nested in this one (the stack's, under scripts/)
                parts = path.relative_to(source).with_suffix("").parts
                if parts[-1] == "__init__":
                    parts = parts[:-1]
                modules[".".join(parts)] = path
    return modules


MODULES = module_files()
PACKAGE_MODULES = {name for name, path in MODULES.items() if path.name == "__init__.py"}

KNOWN_FOLDER_CYCLES: dict[str, str] = {}
"""Top-level packages whose folder cycles are known, each with the reason; the folder check
skips their cycles until they are removed."""


def parse(path: Path) -> ast.Module:
    """``ast.parse`` with the collector paused: on Python 3.11 a finalizer that runs inside the
    parser (a leaked asyncio task logging its destruction, say) makes it raise ``SystemError``."""
    gc.disable()
    try:
        return ast.parse(path.read_text(), str(path))
    finally:
        gc.enable()


def imported_names(path: Path, module: str) -> Iterator[str]:
    """Every module an ``import`` anywhere in the file names, as absolute dotted names."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(parse(path)):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            yield base
            # ``from pkg import sub`` imports the submodule as well as the package.
            yield from (f"{base}.{alias.name}" for alias in node.names)


def graph() -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {}
    for module, path in MODULES.items():
        edges[module] = {
            name for name in imported_names(path, module) if name in MODULES and name != module
        }
    return edges


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(edges[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(edges):
        if node not in index:
            visit(node)
    return found


def folder_of(module: str, packages: set[str] = PACKAGE_MODULES) -> str:
    """The folder a module lives in: its parent package (a package's ``__init__`` lives in the
    package itself). A module directly inside a top-level package stands alone: that level
    holds both what assembles the subpackages (``lgos.app``, ``lgos.state``) and what they all
    build on (``lgos.errors``, ``lgos.config``), so as one node it would close a cycle with
    every subpackage."""
    folder = module if module in packages else module.rpartition(".")[0]
    return folder if "." in folder else module


def folder_graph(
    edges: dict[str, set[str]], packages: set[str] = PACKAGE_MODULES
) -> dict[str, dict[str, tuple[str, str]]]:
    """Folder → the folders it imports, each with one module import that makes the edge."""
    folders: dict[str, dict[str, tuple[str, str]]] = {}
    for module in sorted(edges):
        source = folder_of(module, packages)
        targets = folders.setdefault(source, {})
        for target in sorted(edges[module]):
            folder = folder_of(target, packages)
            if folder != source:
                targets.setdefault(folder, (module, target))
    return folders


def cycle_path(edges: dict[str, set[str]], component: list[str]) -> list[str]:
    """One cycle through the first node of a strongly connected component, as a path."""
    start = component[0]
    members = set(component)
    parents: dict[str, str] = {}
    queue = [start]
    while queue:  # breadth first: the shortest way back to the start
        node = queue.pop(0)
        for target in sorted(edges[node] & members):
            if target == start:
                path = [node]
                while path[-1] != start:
                    path.append(parents[path[-1]])
                return [*reversed(path), start]
            if target not in parents:
                parents[target] = node
                queue.append(target)
    raise AssertionError(f"{component} is not a cycle")


def folder_cycles(modules: dict[str, set[str]], packages: set[str] = PACKAGE_MODULES) -> list[str]:
    """Each folder cycle as ``a -> b -> a``, every hop with the import that makes it."""
    folders = folder_graph(modules, packages)
    edges = {folder: set(targets) for folder, targets in folders.items()}
    found = []
    for component in cycles(edges):
        path = cycle_path(edges, component)
        hops = [
            f"{a} -> {b} ({' imports '.join(folders[a][b])})" for a, b in itertools.pairwise(path)
        ]
        found.append("; ".join(hops))
    return found


def test_the_checker_sees_every_first_party_package() -> None:
    assert {name.split(".")[0] for name in MODULES} == {*PACKAGES, "scripts"}
    assert "lgos.protocol.responses.routes" in MODULES
    assert "lgos.app" in graph()["lgos"]


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_first_party_modules() -> None:
    assert cycles(graph()) == []


def test_the_folder_checker_finds_a_cycle_and_names_its_imports() -> None:
    packages = {"pkg", "pkg.run", "pkg.hold"}
    modules = {
        "pkg.app": {"pkg.run.runner"},
        "pkg.errors": set(),
        "pkg.run.runner": {"pkg.errors", "pkg.hold.lease"},
        "pkg.run.events": set(),
        "pkg.hold.lease": {"pkg.errors"},
        "pkg.hold.service": {"pkg.run.events"},
    }
    assert folder_cycles(modules, packages) == [
        "pkg.hold -> pkg.run (pkg.hold.service imports pkg.run.events); "
        "pkg.run -> pkg.hold (pkg.run.runner imports pkg.hold.lease)"
    ]
    del modules["pkg.hold.service"]
    assert folder_cycles(modules, packages) == []  # app -> run -> errors is no loop
    modules["pkg.errors"] = {"pkg.run"}
    assert folder_cycles(modules, packages) == [
        "pkg.errors -> pkg.run (pkg.errors imports pkg.run); "
        "pkg.run -> pkg.errors (pkg.run.runner imports pkg.errors)"
    ]


def test_a_module_belongs_to_its_package_folder_below_the_top_level() -> None:
    packages = {"pkg", "pkg.run"}
    assert folder_of("pkg", packages) == "pkg"
    assert folder_of("pkg.app", packages) == "pkg.app"
    assert folder_of("pkg.run", packages) == "pkg.run"
    assert folder_of("pkg.run.runner", packages) == "pkg.run"


def test_no_import_cycles_between_first_party_folders() -> None:
    found = [
        cycle for cycle in folder_cycles(graph()) if cycle.split(".")[0] not in KNOWN_FOLDER_CYCLES
    ]
    assert found == [], "\n".join(found)


@pytest.mark.parametrize("module", sorted(MODULES))
def test_first_party_code_never_imports_tests(module: str) -> None:
    names = set(imported_names(MODULES[module], module))
    assert not {name for name in names if name == "tests" or name.startswith("tests.")}


@pytest.mark.parametrize("module", sorted(name for name in MODULES if name.startswith("scripts")))
def test_scripts_never_edit_sys_path(module: str) -> None:
    """Scripts run as ``python -m scripts.<name>`` from the root; none reaches around that."""
    for node in ast.walk(parse(MODULES[module])):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            owner = node.value
            assert not (
                isinstance(owner.value, ast.Name)
                and owner.value.id == "sys"
                and owner.attr == "path"
            ), f"{module} edits sys.path"
