"""The test tree's own layout, checked statically over every module's AST.

Test modules and conftest files are not libraries: what more than one of them needs (helpers,
constants, fixtures shared as plugins) lives in helper modules, ``tests/support`` for the whole
tree, so no module imports a test module or a conftest. pyproject's ``asyncio_mode = "auto"``
marks every async test already.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
SUPPORT = "tests.support"


def python_files() -> Iterator[Path]:
    yield from sorted(TESTS.rglob("*.py"))


def imported_modules(tree: ast.Module) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "tests":
                yield from (f"tests.{alias.name}" for alias in node.names)
            else:
                yield node.module


def plugins(tree: ast.Module) -> Iterator[str]:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytest_plugins" for t in node.targets
        ):
            for value in ast.walk(node.value):
                if isinstance(value, ast.Constant) and isinstance(value.value, str):
                    yield value.value


def is_support(module: str) -> bool:
    return module == SUPPORT or module.startswith(SUPPORT + ".")


def is_test_or_conftest(module: str) -> bool:
    """A module pytest collects or loads itself: ``test_*`` or ``conftest`` (or ``tests``)."""
    last = module.rsplit(".", 1)[-1]
    return module == "tests" or last == "conftest" or last.startswith("test_")


def test_no_module_imports_a_test_module_or_conftest() -> None:
    offenders = []
    for path in python_files():
        tree = ast.parse(path.read_text(), str(path))
        for module in [*imported_modules(tree), *plugins(tree)]:
            if module.split(".")[0] == "tests" and is_test_or_conftest(module):
                offenders.append(f"{path.relative_to(TESTS.parent)}: {module}")
    assert offenders == []


def test_plugins_are_support_modules() -> None:
    offenders = []
    for path in python_files():
        for plugin in plugins(ast.parse(path.read_text(), str(path))):
            if not is_support(plugin):
                offenders.append(f"{path.relative_to(TESTS.parent)}: {plugin}")
    assert offenders == []


def test_support_modules_are_not_test_modules() -> None:
    # pytest would collect a support module named test_*.py as tests of its own.
    names = [p.name for p in (TESTS / "support").rglob("test_*.py")]
    assert names == []


def test_no_module_marks_itself_asyncio() -> None:
    offenders = []
    for path in python_files():
        for node in ast.parse(path.read_text(), str(path)).body:
            if (
                isinstance(node, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets)
                and "pytest.mark.asyncio" in ast.unparse(node.value)
            ):
                offenders.append(str(path.relative_to(TESTS.parent)))
    assert offenders == []


def test_the_layout_check_sees_imports_of_test_modules() -> None:
    tree = ast.parse(
        "from tests.contract.test_background import poll\n"
        "from tests import conftest\n"
        "import tests.support.clients\n"
        "pytest_plugins = ['tests.support.files', 'tests.e2e.conftest']\n"
    )
    found = [*imported_modules(tree), *plugins(tree)]
    assert [m for m in found if is_test_or_conftest(m)] == [
        "tests.contract.test_background",
        "tests.conftest",
        "tests.e2e.conftest",
    ]
