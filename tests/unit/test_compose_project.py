"""compose.project.yaml, the override that serves a project of one's own beside the demo graphs:
valid Compose, and merged over compose.yaml it gives LGOS and its worker one read-only project
folder and the one setting that names it, nothing else."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
OVERRIDE = ROOT / "compose.project.yaml"


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text())
    assert isinstance(data, dict)
    return data


def target(volume: str) -> str:
    return volume.split(":")[-2] if volume.endswith((":ro", ":rw")) else volume.split(":")[-1]


def test_the_override_matches_the_compose_specification() -> None:
    command = [str(BIN / "check-jsonschema"), "--builtin-schema", "vendor.compose-spec"]
    result = subprocess.run([*command, str(OVERRIDE)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_it_mounts_the_project_into_lgos_and_its_worker_only() -> None:
    base, override = load(ROOT / "compose.yaml")["services"], load(OVERRIDE)["services"]
    assert set(override) == {"lgos", "lgos-worker"}
    for name, service in override.items():
        assert set(service) == {"environment", "volumes"}, name  # image, user, limits stay
        inside = service["environment"]["LGOS_PROJECT"]
        (volume,) = service["volumes"]
        assert volume == (
            f"${{LGOS_PROJECT:?set LGOS_PROJECT to your project's folder}}:{inside}:ro"
        )
        # Compose merges volumes by their path inside: a new one, beside the base's.
        assert inside not in {target(v) for v in base[name]["volumes"]}
        assert "LGOS_PROJECT" not in base[name]["environment"]  # unset unless overridden


def test_the_generated_dockerfile_sets_the_same_setting() -> None:
    template = ROOT / "services/lgos/src/lgos/scaffold/template/Dockerfile.jinja"
    lines = template.read_text().splitlines()
    assert "ENV LGOS_PROJECT=/srv/{{ project_name }}" in lines
    assert "COPY pyproject.toml /srv/{{ project_name }}/pyproject.toml" in lines
