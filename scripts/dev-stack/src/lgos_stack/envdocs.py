"""The environment-variable reference (docs/reference/environment.md), generated.

Three sources say which variables exist: the pydantic-settings classes of the first-party
services and graphs (name, default and meaning from the field), the variables the code reads
with ``os.environ`` / ``os.getenv`` (found in the source), and compose's ``${VAR}``
interpolations. Meanings the settings classes do not carry come from ``env_meanings.toml`` beside
this module. ``problems()`` names what is read but undocumented and what is documented but read
by nothing; ``render()`` writes the page.
"""

from __future__ import annotations

import ast
import importlib
import os
import re
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic_settings import BaseSettings

from lgos_stack.paths import ROOT

PAGE = ROOT / "docs" / "reference" / "environment.md"
MEANINGS = Path(__file__).with_name("env_meanings.toml")

SETTINGS_CLASSES: tuple[tuple[str, str], ...] = (
    ("lgos.settings:LGOSSettings", "LGOS, `lgos worker`"),
    ("service_kit.langfuse:LangfuseSettings", "LGOS, `lgos worker`"),
    ("files_service.settings:FilesSettings", "Files service"),
    ("offline_model.settings:OfflineModelSettings", "offline-model"),
    ("lgos_demo_graphs.model:DemoAPISettings", "demo graphs"),
    ("lgos_demo_graphs.web_search:WebSearchSettings", "demo graphs"),
    ("lgos_demo_graphs.display_file:FilesSettings", "display-file"),
    ("lgos_demo_graphs.advanced.settings:KnowledgeSettings", "advanced-graph"),
)
"""Every settings class (``module:Class``) and who reads it. A new class must be added here; a
test fails on a BaseSettings subclass missing from this list."""

SOURCE_DIRS: tuple[tuple[str, str, bool], ...] = (
    # (folder, who reads it, whether `make dev` starts that code)
    ("services/lgos/src", "LGOS", True),
    ("services/files/src", "Files service", True),
    ("services/offline-model/src", "offline-model", True),
    ("services/service-kit/src", "every service", True),
    ("graphs/src", "demo graphs", True),
    ("gateways/src", "gateway jobs", True),
    ("gateways/litellm", "LiteLLM hooks", True),
    ("ui/chainlit", "Chainlit app", True),
    ("ui/open-webui", "Open WebUI pipe and setup", True),
    ("ui/client/src", "lgos_ui", True),
    ("scripts/dev-stack/src", "`make dev`", True),
    ("scripts/examples", "SDK examples", False),
    ("scripts", "benchmarks", False),
)
"""Where first-party code reads the environment. Files under an earlier folder are not read
again for a later one (``scripts`` covers only the files directly in it)."""

NOT_STARTED_BY_DEV = ("bifrost_sync.py", "bifrost_catalog.py")
"""Code under a `make dev` folder that only compose runs (the native stack has no Bifrost)."""

ENV_HELPERS = {"keep_secret": 1, "shown": 0}
"""Functions of the stack that read the variable named by one string argument (its index)."""

COMPOSE_VAR = re.compile(r"(?<!\$)\$\{([A-Z][A-Z0-9_]*)(?:(:?[-?+])([^}]*))?\}")
"""``${VAR}``, ``${VAR:-default}``, ``${VAR:?error}``, ``${VAR:+alt}``; ``$${...}`` is a literal."""


@dataclass
class Variable:
    name: str
    defaults: dict[str, str] = field(default_factory=dict)
    """Who reads it -> its default there."""
    meaning: str = ""
    readers: set[str] = field(default_factory=set)
    dev: str = "—"
    compose: str = "—"


@dataclass(frozen=True)
class CodeRead:
    name: str
    default: str | None
    path: str
    reader: str
    started_by_dev: bool


def _env_name(prefix: str, name: str, info: Any) -> str:
    alias = info.validation_alias or info.alias
    return str(alias if isinstance(alias, str) else prefix + name).upper()


def _default(info: Any) -> str:
    value = info.get_default(call_default_factory=True)
    if value is None or value in ((), [], {}, ""):
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split()).replace("|", "\\|")


def settings_fields() -> Iterator[tuple[str, str, str, str]]:
    """(variable, reader, default, meaning) for every field of every settings class."""
    for spec, reader in SETTINGS_CLASSES:
        module, name = spec.split(":")
        cls = getattr(importlib.import_module(module), name)
        prefix = str(cls.model_config.get("env_prefix", ""))
        for field_name, info in cls.model_fields.items():
            yield (
                _env_name(prefix, field_name, info),
                reader,
                _default(info),
                _one_line(info.description),
            )


def settings_classes_in_source() -> set[str]:
    """``module:Class`` of every BaseSettings subclass defined in the source folders."""
    found: set[str] = set()
    for folder, _, _ in SOURCE_DIRS:
        base = ROOT / folder
        for path in _python_files(base, folder):
            tree = ast.parse(path.read_text(), str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ClassDef) and any(
                    isinstance(b, ast.Name) and b.id == BaseSettings.__name__ for b in node.bases
                ):
                    module = ".".join(path.relative_to(base).with_suffix("").parts)
                    found.add(f"{module}:{node.name}")
    return found


def _python_files(base: Path, folder: str) -> Iterable[Path]:
    if folder == "scripts":
        return sorted(base.glob("*.py"))
    return sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)


def _is_environ(node: ast.expr) -> bool:
    """``os.environ`` or a name called ``environ``."""
    if isinstance(node, ast.Attribute):
        return node.attr == "environ"
    return isinstance(node, ast.Name) and node.id == "environ"


def _string(node: ast.expr | None) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def names_read(tree: ast.AST) -> Iterator[tuple[str, str | None]]:
    """(name, literal default) of the variables a module reads: ``os.environ[...]``,
    ``os.environ.get(...)``, ``os.getenv(...)``, ``env = os.environ.get; env(...)`` and the
    stack's helpers."""
    aliases = {
        target.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "get"
        and _is_environ(node.value.value)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_environ(node.value):
            if (name := _string(node.slice)) is not None:
                yield name, None
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            env_get = isinstance(func, ast.Attribute) and (
                (func.attr == "get" and _is_environ(func.value)) or func.attr == "getenv"
            )
            alias = isinstance(func, ast.Name) and func.id in aliases
            if (env_get or alias) and (name := _string(node.args[0])) is not None:
                default = _string(node.args[1]) if len(node.args) > 1 else None
                yield name, default
            helper = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            index = ENV_HELPERS.get(helper)
            if (
                index is not None
                and len(node.args) > index
                and (name := _string(node.args[index])) is not None
            ):
                yield name, None


def code_reads() -> list[CodeRead]:
    reads: list[CodeRead] = []
    seen: set[Path] = set()
    for folder, reader, by_dev in SOURCE_DIRS:
        for path in _python_files(ROOT / folder, folder):
            if path in seen:
                continue
            seen.add(path)
            tree = ast.parse(path.read_text(), str(path))
            rel = str(path.relative_to(ROOT))
            who, started = reader, by_dev and path.name not in NOT_STARTED_BY_DEV
            if "bench" in path.relative_to(ROOT).parts:
                who, started = "benchmarks", False
            reads.extend(
                CodeRead(name, default, rel, who, started)
                for name, default in set(names_read(tree))
            )
    return reads


def port_variables() -> dict[str, int]:
    """The stack's port variables (read by name from a table, not a literal)."""
    from lgos_stack.ports import PORT_VARIABLES

    return dict(PORT_VARIABLES.values())


def dev_environment() -> set[str]:
    """Variables `make dev` sets for the processes it starts, as planned from an empty shell
    (so the page does not depend on who generates it)."""
    from lgos_stack.components import components
    from lgos_stack.ports import Ports

    saved = dict(os.environ)
    os.environ.clear()
    try:
        names: set[str] = set()
        for component in components(Ports.from_env()):
            names.update(component.env)
        return names
    finally:
        os.environ.update(saved)


COMPOSE_OVERRIDES = ("compose.project.yaml",)
"""Override files a user adds with ``-f``: what they read is documented as theirs."""


def compose_override_reads() -> dict[str, str]:
    """``${VAR}`` in the override files -> how, naming the file it needs."""
    found: dict[str, str] = {}
    for name in COMPOSE_OVERRIDES:
        for var, how in compose_reads((ROOT / name).read_text()).items():
            found.setdefault(var, f"{how} with `{name}`")
    return found


def compose_reads(text: str) -> dict[str, str]:
    """``${VAR}`` in compose -> how compose treats it: required, its default, or passed."""
    found: dict[str, str] = {}
    for match in COMPOSE_VAR.finditer(text):
        name, op, rest = match.group(1), match.group(2) or "", match.group(3) or ""
        if "?" in op:
            how = "required"
        elif "+" in op:
            how = "tested for being set"
        elif "-" in op:
            how = f"default `{rest}`" if rest else "default empty"
        else:
            how = "passed"
        forms = found.get(name, "").split("; ") if name in found else []
        if how not in forms:
            found[name] = "; ".join([*forms, how])
    return found


def meanings() -> dict[str, str]:
    data = tomllib.loads(MEANINGS.read_text())
    return {name: _one_line(str(text)) for name, text in data.items()}


def _ignored(name: str) -> bool:
    """Names code reads that are the platform's, not the stack's settings."""
    return name in {"PATH", "HOME", "PYTHONPATH", "DATA_DIR"}


def collect() -> dict[str, Variable]:
    variables: dict[str, Variable] = {}

    def get(name: str) -> Variable:
        return variables.setdefault(name, Variable(name))

    for name, reader, default, meaning in settings_fields():
        var = get(name)
        var.readers.add(reader)
        var.defaults[reader] = default
        var.meaning = var.meaning or meaning
    dev_started: set[str] = set()
    dev_reads: set[str] = set()
    for read in code_reads():
        if _ignored(read.name):
            continue
        var = get(read.name)
        var.readers.add(read.reader)
        if read.default:
            var.defaults.setdefault(read.reader, read.default)
        if read.started_by_dev:
            dev_started.add(read.name)
        if read.reader == "`make dev`":
            dev_reads.add(read.name)
    for name, port in port_variables().items():
        var = get(name)
        var.readers.add("`make dev`")
        var.defaults.setdefault("`make dev`", str(port))
        dev_reads.add(name)
    settings_readers = {reader for _, reader in SETTINGS_CLASSES}
    dev_sets = dev_environment()
    for var in variables.values():
        if var.name in dev_sets:
            own = var.name in dev_reads
            var.dev = "sets it from yours, else its own" if own else "sets it (yours is ignored)"
        elif var.name in dev_reads:
            var.dev = "reads"
        elif var.name in dev_started or var.readers & settings_readers:
            var.dev = "passes yours on"
    compose_text = (ROOT / "compose.yaml").read_text()
    for name, how in (compose_override_reads() | compose_reads(compose_text)).items():
        var = get(name)
        var.compose = how
        if not var.readers:
            var.readers.add("compose")
    notes = meanings()
    for var in variables.values():
        if not var.meaning:
            var.meaning = notes.get(var.name, "")
    return variables


def problems(variables: dict[str, Variable] | None = None) -> list[str]:
    """Undocumented variables, documented ones nothing reads, settings classes not listed."""
    variables = variables if variables is not None else collect()
    found = [
        f"{var.name} ({', '.join(sorted(var.readers))}) has no meaning: give its settings field a "
        f"description or add it to {MEANINGS.relative_to(ROOT)}"
        for var in variables.values()
        if not var.meaning
    ]
    found += [
        f"{name} is documented in {MEANINGS.relative_to(ROOT)} but nothing reads it"
        for name in meanings()
        if name not in variables
    ]
    listed = {spec for spec, _ in SETTINGS_CLASSES}
    found += [
        f"settings class {spec} is missing from lgos_stack.envdocs.SETTINGS_CLASSES"
        for spec in sorted(settings_classes_in_source() - listed)
    ]
    return found


GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("LGOS", ("LGOS_",)),
    ("Langfuse (optional trace export)", ("LANGFUSE_",)),
    ("Demo graphs", ("DEMO_API_",)),
    ("Files service", ("FILES_",)),
    ("offline-model", ("OFFLINE_MODEL_",)),
    ("Gateway", ("OPENAI_GATEWAY_", "LITELLM_", "BIFROST_", "MCP_DEMO_")),
    ("Chat UIs", ("CHAINLIT_", "WEBUI_", "OPEN_WEBUI_")),
    ("The native stack", ("DEVSTACK_",)),
)


def _group(name: str) -> str:
    for title, prefixes in GROUPS:
        if name.startswith(prefixes):
            return title
    return "Other"


def _default_cell(var: Variable) -> str:
    values = set(var.defaults.values())
    if len(values) <= 1:
        value = next(iter(values), "")
        return f"`{value}`" if value else ""
    return "; ".join(
        f"{reader}: `{d}`" if d else f"{reader}: none" for reader, d in var.defaults.items()
    )


def render(variables: dict[str, Variable] | None = None) -> str:
    variables = variables if variables is not None else collect()
    lines = [
        "# Environment variables",
        "",
        "<!-- Generated by `make env-docs` (lgos_stack.envdocs) from the settings classes, the",
        "     code's environment reads and compose.yaml. Edit the sources, not this page. -->",
        "",
        "Every variable the stack's code, settings classes or `compose.yaml` reads. **make dev**:",
        "*reads* (the stack runner itself), *passes yours on* (the processes it starts inherit",
        "your shell), *sets it* (the runner sets it for its processes: your value is ignored",
        "unless it says *from yours*). **compose**: how `compose.yaml` interpolates it from `.env`",
        "(*required*: compose refuses to start without it). A variable compose does not",
        "interpolate does not reach its containers.",
        "",
    ]
    by_group: dict[str, list[Variable]] = {}
    for var in variables.values():
        by_group.setdefault(_group(var.name), []).append(var)
    for title in [t for t, _ in GROUPS] + ["Other"]:
        group = sorted(by_group.get(title, []), key=lambda v: v.name)
        if not group:
            continue
        lines += [
            f"## {title}",
            "",
            "| variable | default | meaning | read by | make dev | compose |",
            "|---|---|---|---|---|---|",
        ]
        for var in group:
            lines.append(
                f"| `{var.name}` | {_default_cell(var)} | {var.meaning} | "
                f"{', '.join(sorted(var.readers))} | {var.dev} | {var.compose} |"
            )
        lines.append("")
    return "\n".join(lines)
