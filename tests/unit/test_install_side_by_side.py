"""make runs the install steps side by side; apt-get steps take turns, since dpkg's own lock
makes a second apt-get fail at once instead of waiting. Provoked for real: the test holds the
installer's lock while an apt step starts, with a stand-in apt-get that records its calls. The
large venvs install with uv, but for the packages pip must pick (torch's local CPU wheel)."""

from __future__ import annotations

import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lgos_stack.paths import ROOT

from scripts.install import APT_LOCK, pinned


def test_an_apt_step_waits_for_the_one_before_it(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "calls"
    apt_get = bin_dir / "apt-get"
    apt_get.write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    apt_get.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    command = [
        sys.executable,
        "-m",
        "scripts.install",
        "--goal",
        "test",
        "--logs",
        str(tmp_path / "logs"),
        "apt",
        "some-package",
        "--command",
        "no-such-program-here",
    ]
    held = os.open(APT_LOCK, os.O_RDONLY | os.O_CREAT, 0o644)
    try:
        fcntl.flock(held, fcntl.LOCK_EX)
        step = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True)
        time.sleep(1.5)
        assert step.poll() is None, "the apt step did not wait for the lock"
        assert not calls.exists()
    finally:
        os.close(held)
    out, _ = step.communicate(timeout=30)
    assert step.returncode == 0, out
    assert calls.read_text().splitlines() == [
        "update -qq",
        "install -y -qq some-package",
    ]


def test_the_packages_pip_installs_first_come_with_their_pins(tmp_path: Path) -> None:
    requirements = tmp_path / "requirements.txt"
    requirements.write_text("# torch first\nTorch==2.13.0  # the CPU wheel\nopen-webui==0.12.4\n")
    assert pinned(requirements, ["torch"]) == ["Torch==2.13.0"]
    assert pinned(requirements, []) == []
    with pytest.raises(SystemExit, match=r"pins numpy 0 times \(one `numpy==` line\)"):
        pinned(requirements, ["numpy"])


def test_the_large_venvs_install_with_uv_and_torch_by_pip_first() -> None:
    """Open WebUI's venv gets torch from pip (the machine's CPU wheel), the rest from uv."""
    makefile = (ROOT / "Makefile").read_text()
    assert "uv-pip --uv $(UV) --pip-first torch $(TOOLS)/open-webui" in makefile
    requirements = ROOT / "ui" / "open-webui" / "requirements.txt"
    assert pinned(requirements, ["torch"]) == ["torch==2.13.0"]
