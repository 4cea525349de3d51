"""compose.local.yaml swaps images only: every public image for its local stand-in (same
version in its tag), the repository's builds onto the local bases, and nothing else but what
MinIO's absence forces (placeholders for its two services, the Files service on disk)."""

from __future__ import annotations

import re
from typing import Any

import yaml
from lgos_stack.containers.bases import PYTHON_IMAGE, STANDINS
from lgos_stack.containers.images import ON_STANDIN
from lgos_stack.paths import ROOT

BASE: dict[str, Any] = yaml.safe_load((ROOT / "compose.yaml").read_text())["services"]
LOCAL: dict[str, Any] = yaml.safe_load((ROOT / "compose.local.yaml").read_text())
MINIO = {"minio", "minio-bucket"}
"""No installable server: their services run the Debian base doing nothing."""
LEFT_OUT_PROFILES = {"bifrost"}
"""Bifrost has no installable build either: its profile is not run here."""


def name_and_tag(image: str) -> tuple[str, str]:
    repository, tag = image.rsplit(":", 1)
    return repository.rsplit("/", 1)[-1], tag


def test_only_images_and_builds_change() -> None:
    assert set(LOCAL) <= {"x-local-python", "services"}
    for service, override in LOCAL["services"].items():
        assert service in BASE, service
        if service in MINIO:
            assert set(override) <= {"image", "command", "entrypoint", "healthcheck"}, service
        elif service == "files":
            assert set(override) == {"build", "environment"}
            assert override["environment"] == {
                "FILES_STORAGE": "disk",
                "FILES_STORAGE_DIR": "/tmp/files-store",  # on its own volume, files-spool
            }
            assert any(v.startswith("files-spool:/tmp") for v in BASE["files"]["volumes"])
        else:
            assert set(override) in ({"image"}, {"build"}), service


def test_every_public_image_run_here_has_its_stand_in() -> None:
    swapped = {s: o["image"] for s, o in LOCAL["services"].items() if "image" in o}
    for service, spec in BASE.items():
        if set(spec.get("profiles", [])) <= LEFT_OUT_PROFILES and spec.get("profiles"):
            continue
        image = spec.get("image", "")
        if "build" in spec or image.startswith("lgos-demo/") or service in MINIO:
            continue
        assert swapped[service] == STANDINS[service].tag, service
        # The stand-in keeps the public image's name and tag (PostgreSQL: pgvector's).
        assert name_and_tag(swapped[service]) == name_and_tag(image), service


def test_builds_take_the_local_bases() -> None:
    for service, spec in BASE.items():
        if "build" not in spec:
            continue
        args = LOCAL["services"][service]["build"]["args"]
        if service in ON_STANDIN:
            arg, standin = ON_STANDIN[service]
            assert args == {arg: STANDINS[standin].tag}
            dockerfile = (ROOT / spec["build"]["dockerfile"]).read_text()
            default = re.search(rf"^ARG {arg}=(\S+)$", dockerfile, flags=re.MULTILINE)
            assert default is not None
            assert name_and_tag(STANDINS[standin].tag) == name_and_tag(default.group(1))
        else:
            assert args == {"PYTHON_IMAGE": PYTHON_IMAGE}, service


def test_minio_placeholders_keep_the_order_the_files_service_waits_for() -> None:
    minio, bucket = LOCAL["services"]["minio"], LOCAL["services"]["minio-bucket"]
    assert minio["healthcheck"] == {"test": ["CMD", "true"]}
    assert bucket["entrypoint"] == ["true"]
    assert BASE["files"]["depends_on"]["minio-bucket"]["condition"] == (
        "service_completed_successfully"
    )
