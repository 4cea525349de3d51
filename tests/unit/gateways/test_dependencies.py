"""The gateway jobs stand apart from the LGOS server: they talk to it over HTTP only, so the
package neither depends on nor imports ``lgos`` (its logging comes from the service kit)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
GATEWAYS = ROOT / "gateways"


def imported_roots(path: Path) -> set[str]:
    roots = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            roots.add(node.module.split(".")[0])
    return roots


def test_the_package_does_not_depend_on_lgos() -> None:
    project = tomllib.loads((GATEWAYS / "pyproject.toml").read_text())["project"]
    names = {dependency.split("=")[0].split("[")[0] for dependency in project["dependencies"]}
    assert "lgos" not in names
    assert "service-kit" in names


def test_no_module_imports_lgos() -> None:
    modules = sorted((GATEWAYS / "src" / "lgos_gateways").rglob("*.py"))
    assert modules
    for module in modules:
        assert "lgos" not in imported_roots(module), module.name
    assert "service_kit" in imported_roots(GATEWAYS / "src" / "lgos_gateways" / "litellm_sync.py")
