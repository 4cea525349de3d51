"""Import hygiene of the first-party code, checked statically over every module's AST.

No import cycles between first-party modules (a package ``__init__`` counts as its own module, so
a submodule importing names through its package while that package imports it is a cycle too),
and neither the packages nor ``scripts/`` ever import ``tests``.
"""

from __future__ import annotations

import ast
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


def imported_names(path: Path, module: str) -> Iterator[str]:
    """Every module an ``import`` anywhere in the file names, as absolute dotted names."""
    is_package = path.name == "__init__.py"
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
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


def test_the_checker_sees_every_first_party_package() -> None:
    assert {name.split(".")[0] for name in MODULES} == {*PACKAGES, "scripts"}
    assert "lgos.protocol.responses.routes" in MODULES
    assert "lgos.app" in graph()["lgos"]


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_import_cycles_between_first_party_modules() -> None:
    assert cycles(graph()) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_first_party_code_never_imports_tests(module: str) -> None:
    names = set(imported_names(MODULES[module], module))
    assert not {name for name in names if name == "tests" or name.startswith("tests.")}


@pytest.mark.parametrize("module", sorted(name for name in MODULES if name.startswith("scripts")))
def test_scripts_never_edit_sys_path(module: str) -> None:
    """Scripts run as ``python -m scripts.<name>`` from the root; none reaches around that."""
    for node in ast.walk(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute):
            owner = node.value
            assert not (
                isinstance(owner.value, ast.Name)
                and owner.value.id == "sys"
                and owner.attr == "path"
            ), f"{module} edits sys.path"
