"""compose.yaml for Compose v1 (Debian's docker-compose 1.29, the only Compose packaged here).

v1 lacks three things compose.yaml uses: the top-level ``name`` (v1 takes ``-p NAME``),
``${VAR:+word}`` interpolation and ``required: false`` on a ``depends_on`` entry. ``render`` gives
the same file with them resolved the way Compose v2 resolves them for one run: the name left to
``-p``, ``word`` when VAR is set and not empty (else empty), and an optional dependency kept (as a
plain one) only when its service is enabled by the active profiles. Everything else is left for
v1 to interpolate and merge, overrides included.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

ALTERNATE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*):\+([^}]*)\}")
"""``${VAR:+word}``; ``$${`` (a literal dollar) never matches, its ``$`` is consumed first."""


def env_file(path: Path) -> dict[str, str]:
    """KEY=VALUE lines of a compose env file (comments and blank lines skipped)."""
    values = {}
    for line in path.read_text().splitlines():
        stripped = line.strip()
        if stripped and not stripped.startswith("#") and "=" in stripped:
            key, value = stripped.split("=", 1)
            values[key.strip()] = value.strip()
    return values


def alternate(text: str, env: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        return match.group(2) if env.get(match.group(1)) else ""

    # Split on "$$" so an escaped dollar stays escaped and is never the start of a match.
    return "$$".join(ALTERNATE.sub(value, part) for part in text.split("$$"))


def resolve(node: Any, env: Mapping[str, str]) -> Any:
    if isinstance(node, str):
        return alternate(node, env)
    if isinstance(node, list):
        return [resolve(item, env) for item in node]
    if isinstance(node, dict):
        return {key: resolve(item, env) for key, item in node.items()}
    return node


def enabled(service: Mapping[str, Any], profiles: set[str]) -> bool:
    own = service.get("profiles")
    return not own or bool(profiles.intersection(own))


def render(source: Mapping[str, Any], env: Mapping[str, str], profiles: set[str]) -> dict[str, Any]:
    """``source`` (a parsed compose file) as Compose v1 reads it for a run with ``profiles``."""
    data: dict[str, Any] = resolve(source, env)
    data.pop("name", None)
    services: dict[str, Any] = data["services"]
    for service in services.values():
        depends = service.get("depends_on")
        if not isinstance(depends, dict):
            continue
        for name, condition in list(depends.items()):
            optional = isinstance(condition, dict) and condition.pop("required", True) is False
            if optional and (name not in services or not enabled(services[name], profiles)):
                del depends[name]
    return data


def write(source: Path, target: Path, env: Mapping[str, str], profiles: set[str]) -> Path:
    """``source`` rendered for v1 into ``target``; run it with ``--project-directory`` set to
    ``source``'s folder, so relative paths still name the same files."""
    rendered = render(yaml.safe_load(source.read_text()), env, profiles)
    target.write_text(yaml.safe_dump(rendered, sort_keys=False, width=1000))
    return target
