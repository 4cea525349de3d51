"""``lgos new NAME``: a standalone project serving one graph, rendered from the copier template
shipped in this package (``template/``), so a project can take a newer template later."""

from __future__ import annotations

import keyword
import re
from pathlib import Path

TEMPLATE = Path(__file__).with_name("template")
PROJECT_NAME = re.compile(r"[a-z][a-z0-9]*(-[a-z0-9]+)*")
TAKEN = frozenset({"lgos", "lgos_demo_graphs", "service_kit", "tests", "test"})
"""Packages a project must not shadow: lgos itself, the stack's graphs, the test folder."""


class ScaffoldError(ValueError):
    """A project that cannot be generated; the message is one line for the command line."""


def package_of(name: str) -> str:
    """The Python package a project named ``name`` holds: ``my-graph`` holds ``my_graph``."""
    if not PROJECT_NAME.fullmatch(name):
        raise ScaffoldError(
            f"invalid project name {name!r}: use lowercase letters, digits and single hyphens, "
            "starting with a letter (e.g. my-graph)"
        )
    package = name.replace("-", "_")
    if keyword.iskeyword(package) or package in TAKEN:
        raise ScaffoldError(f"invalid project name {name!r}: its package {package} is taken")
    return package


def checkout() -> Path | None:
    """The stack checkout this lgos runs from, if it does (else it is an installed wheel)."""
    root = Path(__file__).resolve().parents[5]
    services = root / "services"
    manifests = (services / "lgos" / "pyproject.toml", services / "service-kit" / "pyproject.toml")
    return root if all(m.is_file() for m in manifests) else None


def create_project(name: str, destination: Path) -> Path:
    """Render the template for ``name`` into ``destination``, a folder that is absent or empty;
    the project's absolute path."""
    package_of(name)
    destination = destination.expanduser().resolve()
    if destination.exists() and (not destination.is_dir() or any(destination.iterdir())):
        raise ScaffoldError(f"{destination} exists and is not an empty folder")
    from copier import run_copy  # imported here: serving never needs the template engine

    answers = {"project_name": name, "lgos_checkout": str(checkout() or "")}
    run_copy(str(TEMPLATE), destination, data=answers, defaults=True, quiet=True)
    return destination


def next_steps(name: str, project: Path) -> str:
    """What to run after ``lgos new``: test, try, plug into the stack."""
    package = package_of(name)
    return (
        f"Created {project} (model {name}, package {package})\n"
        "Next steps:\n"
        f"  1. test it:  cd {project} && uv run pytest\n"
        "  2. try it:   uv run lgos serve --project .\n"
        "  3. plug it into the stack, from its checkout:\n"
        f"     make dev LGOS_PROJECT={project}\n"
    )
