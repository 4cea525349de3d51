"""The registries ``lgos serve`` and ``lgos worker`` serve: ``MODULE:ATTR`` targets, imported from
the current directory (or an app directory) as uvicorn imports its app, and merged into one.

Every way a target can fail is a ``TargetError`` whose message is one line naming the target and
the cause: the CLI prints it instead of a traceback.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import tomllib
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from lgos.config import GraphRegistry


class TargetError(Exception):
    """A registry target that cannot be served (one line: the target and the cause)."""


def parse_targets(value: str | Iterable[str]) -> tuple[str, ...]:
    """Each ``MODULE:ATTR`` in ``value`` (comma-separated, or several such strings), stripped;
    a malformed entry or no entry at all is a ``ValueError``."""
    entries = [value] if isinstance(value, str) else list(value)
    targets = tuple(part.strip() for entry in entries for part in entry.split(",") if part.strip())
    if not targets:
        raise ValueError("no registry named: expected MODULE:ATTR")
    for target in targets:
        module, _, attr = target.partition(":")
        if not (attr.isidentifier() and all(part.isidentifier() for part in module.split("."))):
            raise ValueError(f"expected MODULE:ATTR, got {target!r}")
    return targets


AppDirs = Path | Sequence[Path] | None
"""Where targets are imported from: one folder, several (searched in order), or None for the
current directory."""


@dataclass(frozen=True, kw_only=True)
class Project:
    """A project folder that says what it serves in its ``pyproject.toml``::

    [tool.lgos]
    registry = "my_graph.registry:create_registry"   # MODULE:ATTR, or a list of them
    app-dir = "src"                                    # optional; default: the folder itself
    """

    folder: Path
    registry: tuple[str, ...]
    app_dir: Path


def read_project(folder: Path) -> Project:
    """The ``[tool.lgos]`` table of ``folder``'s ``pyproject.toml``; anything missing or malformed
    is a ``TargetError`` naming the file and what is wrong."""
    folder = folder.expanduser().resolve()
    manifest = folder / "pyproject.toml"
    try:
        tool = tomllib.loads(manifest.read_text(encoding="utf-8")).get("tool")
    except FileNotFoundError:
        raise TargetError(f"project {folder} has no pyproject.toml") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise TargetError(f"cannot read {manifest}: {' '.join(str(error).split())}") from None
    table = tool.get("lgos") if isinstance(tool, dict) else None
    if not isinstance(table, dict) or "registry" not in table:
        raise TargetError(f'{manifest} has no [tool.lgos] registry = "MODULE:ATTR"')
    registry, app_dir = table["registry"], table.get("app-dir", ".")
    try:
        if not isinstance(registry, str | list) or not all(isinstance(r, str) for r in registry):
            raise ValueError("expected MODULE:ATTR or a list of them")
        targets = parse_targets(registry)
    except ValueError as error:
        raise TargetError(f"{manifest}: [tool.lgos] registry: {error}") from None
    if not isinstance(app_dir, str):
        raise TargetError(f"{manifest}: [tool.lgos] app-dir: expected a relative folder")
    where = (folder / app_dir).resolve()
    if not where.is_relative_to(folder) or not where.is_dir():
        raise TargetError(f"{manifest}: [tool.lgos] app-dir {app_dir!r} is not a folder in it")
    return Project(folder=folder, registry=targets, app_dir=where)


def served(
    registry: Sequence[str], app_dir: Path | None, project: Path | None
) -> tuple[list[str], list[Path]]:
    """The targets and app directories the settings name: the LGOS_REGISTRY targets from the app
    directory (default: the current one), then a project's own (a target named by both is
    served once). A project that names nothing servable is a ``TargetError``."""
    targets, folders = list(registry), [app_dir or Path.cwd()]
    if project is not None:
        found = read_project(project)
        targets += [target for target in found.registry if target not in targets]
        folders.append(found.app_dir)
    return targets, folders


def load_registries(targets: Sequence[str], app_dir: AppDirs = None) -> GraphRegistry:
    """Import each target from ``app_dir`` (default: the current directory) and merge them in
    order; a graph two targets both serve is a ``TargetError`` naming the graph and both."""
    where = _import_from(app_dir)
    merged: GraphRegistry | None = None
    served_by: dict[str, str] = {}
    for target in targets:
        registry = load_registry(target, where)
        for name in registry:
            if name in served_by:
                first = served_by[name]
                raise TargetError(f"graph {name!r} is served by both {first} and {target}")
            served_by[name] = target
        merged = registry if merged is None else merged.merge(registry)
    if merged is None:
        raise TargetError("no registry named: expected MODULE:ATTR")
    return merged


def source_folders(targets: Sequence[str], app_dir: AppDirs = None) -> list[Path]:
    """The folders the targets' code comes from, without importing it: each top-level package's
    folder, or the folder of a top-level module (the app directory for a module that is not
    found yet, so that creating it is a change too)."""
    where = _import_from(app_dir)
    folders: list[Path] = []
    for target in targets:
        top = target.partition(":")[0].split(".")[0]
        spec = importlib.util.find_spec(top)
        if spec is None:
            found = [where]
        elif spec.submodule_search_locations:  # a package, or a namespace package's parts
            found = [Path(location) for location in spec.submodule_search_locations]
        elif spec.origin and spec.has_location:
            found = [Path(spec.origin).parent]
        else:  # built into the interpreter: nothing to watch
            found = []
        folders.extend(folder for folder in found if folder not in folders)
    return folders


def load_registry(target: str, where: Path) -> GraphRegistry:
    """``target``'s ``GraphRegistry``: its attribute is one, or a zero-argument factory of one."""
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as error:
        if _names_the_target(error, module_name):
            raise TargetError(
                f"cannot import module {module_name!r} (from {where}): {error}"
            ) from None
        raise TargetError(f"importing {module_name!r} failed{_raised(error)}") from None
    except Exception as error:  # anything the user's module raises while it is imported
        raise TargetError(f"importing {module_name!r} failed{_raised(error)}") from None
    try:
        found = getattr(module, attr)
    except AttributeError:
        raise TargetError(
            f"module {module_name!r} ({module.__file__}) has no attribute {attr!r}"
        ) from None
    registry = found
    if callable(found) and not isinstance(found, GraphRegistry):
        try:
            registry = found()
        except Exception as error:  # the factory is user code: report, never a traceback
            raise TargetError(f"{target} failed{_raised(error)}") from None
    if not isinstance(registry, GraphRegistry):
        made = "returned" if registry is not found else "is"
        raise TargetError(f"{target} {made} {type(registry).__name__}, not a GraphRegistry")
    return registry


def _import_from(app_dir: AppDirs) -> Path:
    """Put the app directories (default: the current directory) first on ``sys.path``, in order,
    as uvicorn does (a console script's own folder is there instead of the current one); the
    first, which errors name."""
    folders = [app_dir] if isinstance(app_dir, Path) else list(app_dir or ())
    wheres = [folder.resolve() for folder in folders or [Path.cwd()]]
    for where in wheres:
        if not where.is_dir():
            raise TargetError(f"app directory {where} does not exist")
    for where in reversed(wheres):
        if str(where) not in sys.path:
            sys.path.insert(0, str(where))
    return wheres[0]


def _names_the_target(error: ModuleNotFoundError, module_name: str) -> bool:
    """The target module (or a package on its way) is missing, not one the module imports."""
    missing = error.name or ""
    return module_name == missing or module_name.startswith(f"{missing}.")


def _raised(error: BaseException) -> str:
    """`` at FILE:LINE: Type: message`` on one line, FILE:LINE the innermost frame of user code."""
    frames = [
        frame
        for frame in traceback.extract_tb(error.__traceback__)
        if not frame.filename.startswith("<") and "importlib" not in frame.filename
    ]
    where = f" at {frames[-1].filename}:{frames[-1].lineno}" if frames else ""
    message = " ".join(str(error).split())
    return f"{where}: {type(error).__name__}" + (f": {message}" if message else "")
