"""What `make dev` says when it cannot start, provoked for real through its command line: each
failure is one line on stderr naming the cause and the fix (never a traceback), exit status 1,
and the troubleshooting page lists it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from lgos_stack import runner
from lgos_stack.components import components
from lgos_stack.model import Component, Stack
from lgos_stack.paths import ROOT
from lgos_stack.ports import Ports, free_port

PAGE = (ROOT / "docs" / "how-to" / "troubleshoot.md").read_text()


def only(name: str) -> str:
    """DEVSTACK_SKIP naming every component but ``name``."""
    return ",".join(c.name for c in components(Ports.from_env()) if c.name != name)


@pytest.fixture
def occupied() -> Iterator[int]:
    """A port another program listens on without speaking HTTP."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", free_port()))
        listener.listen()
        yield listener.getsockname()[1]


def devstack(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {
        k: v for k, v in os.environ.items() if not k.endswith("_PORT") and k != "DEVSTACK_SKIP"
    }
    return subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "devstack.py"), *args],
        env={**clean, "DEVSTACK_STATE_DIR": str(tmp_path), **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def one_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stdout + result.stderr
    message = result.stderr.strip()
    assert "\n" not in message and "Traceback" not in message, message
    return message


def test_a_port_held_by_another_program(tmp_path: Path, occupied: int) -> None:
    message = one_line(
        devstack(
            tmp_path, "up", "--detach", DEVSTACK_SKIP=only("searxng"), SEARXNG_PORT=str(occupied)
        )
    )
    assert message == (
        f"searxng cannot start: port {occupied} is in use by another program; "
        "stop it, or move searxng with SEARXNG_PORT=<a free port>"
    )
    assert "is in use by another program; stop it, or move searxng with SEARXNG_PORT" in PAGE


def test_a_port_that_already_answers(tmp_path: Path, occupied: int) -> None:
    # PostgreSQL's health check is a TCP connect: the listener looks like a running stack.
    message = one_line(
        devstack(
            tmp_path, "up", "--detach", DEVSTACK_SKIP=only("postgres"), POSTGRES_PORT=str(occupied)
        )
    )
    assert message == f"port {occupied} already serves something: is a stack running?"
    assert "already serves something: is a stack running?" in PAGE


def test_a_port_variable_that_is_no_port(tmp_path: Path) -> None:
    assert (
        one_line(devstack(tmp_path, "status", LGOS_PORT="x"))
        == "LGOS_PORT='x' is not a port number"
    )
    assert "LGOS_PORT='x' is not a port number" in PAGE


def test_a_skip_that_names_no_component(tmp_path: Path) -> None:
    message = one_line(devstack(tmp_path, "up", "--detach", DEVSTACK_SKIP="open-webu"))
    assert message == "DEVSTACK_SKIP names no component: open-webu"
    assert "DEVSTACK_SKIP names no component: …" in PAGE


def test_restart_without_a_detached_stack(tmp_path: Path) -> None:
    assert one_line(devstack(tmp_path, "restart", "lgos")) == "no detached stack is running"
    assert "no detached stack is running" in PAGE


def launch_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, component: Component) -> str:
    monkeypatch.setenv("DEVSTACK_STATE_DIR", str(tmp_path))
    process = runner.start(component, Stack(Ports.from_env()))
    try:
        with pytest.raises(SystemExit) as failed:
            runner.wait_healthy(component, process)
    finally:
        process.kill()
        process.wait()
    message = str(failed.value)
    assert "\n" not in message and "Traceback" not in message, message
    return message


def test_a_server_that_dies_at_start(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    crash = "import sys; print('starting'); sys.exit('bad setting: FOO_URL is not a URL')"
    component = Component(name="crashing", port=free_port(), args=[sys.executable, "-c", crash])
    message = launch_failure(tmp_path, monkeypatch, component)
    log = tmp_path / "crashing.log"
    assert message == f"crashing exited with 1 (bad setting: FOO_URL is not a URL); its log: {log}"
    assert "exited with <status> (<the last line of its log>); its log:" in PAGE


def test_a_server_that_never_becomes_healthy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hang = "import time; time.sleep(30)"
    component = Component(
        name="stuck", port=free_port(), args=[sys.executable, "-c", hang], health_timeout=1.0
    )
    message = launch_failure(tmp_path, monkeypatch, component)
    assert message == f"stuck not healthy after 1s; its log: {tmp_path / 'stuck.log'}"
    assert "not healthy after <n>s; its log:" in PAGE
