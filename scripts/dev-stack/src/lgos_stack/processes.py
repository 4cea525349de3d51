"""Server processes: start one, wait until it answers, stop it; and the processes a detached stack
recorded, stopped without ever signalling a pid that now names another process."""

from __future__ import annotations

import contextlib
import os
import pwd
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from lgos_stack.paths import ROOT

SERVICE_USER = "lgos-dev"
"""The unprivileged system user PostgreSQL runs as when the stack is started as root."""

# --- health ------------------------------------------------------------------------------------


def http_ok(url: str) -> bool:
    """``url`` answers 200 within a second."""
    try:
        with urllib.request.urlopen(url, timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def tcp_open(port: int) -> bool:
    """Something accepts connections on ``127.0.0.1:port`` (databases have no HTTP health)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1.0):
            return True
    except OSError:
        return False


def redis_pong(port: int) -> bool:
    """A Redis server on ``port`` answers PING."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as sock:
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


class Wait(Enum):
    READY = "ready"
    EXITED = "exited"
    TIMEOUT = "timeout"


def wait_for(
    ready: Callable[[], bool],
    process: subprocess.Popen[bytes] | None,
    timeout: float,
    interval: float = 0.1,
) -> Wait:
    """Poll ``ready`` until it holds, ``process`` exits or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not ready():
        if process is not None and process.poll() is not None:
            return Wait.EXITED
        if time.monotonic() > deadline:
            return Wait.TIMEOUT
        time.sleep(interval)
    return Wait.READY


def interrupt(
    process: subprocess.Popen[bytes],
    timeout: float = 10.0,
    how: signal.Signals = signal.SIGINT,
) -> None:
    """``how`` (SIGINT: a clean shutdown), then SIGKILL after ``timeout`` seconds."""
    process.send_signal(how)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


# --- one server for a test or a benchmark -----------------------------------------------------


@dataclass(frozen=True)
class Server:
    url: str
    process: subprocess.Popen[bytes]
    log: Path


@contextmanager
def serve(
    args: list[str],
    *,
    port: int,
    env: Mapping[str, str],
    log: Path | None,
    timeout: float = 30.0,
    python: str = sys.executable,
    health_path: str = "/health",
    command: list[str] | None = None,
    preexec_fn: Callable[[], None] | None = None,
    cwd: Path = ROOT,
) -> Iterator[Server]:
    """Run ``python -m ...args`` (or ``command``) in ``cwd`` until its health route answers; stop
    it after. Its output goes to ``log`` (None: discarded)."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    log = log or Path(os.devnull)
    with log.open("wb") as out:
        process = subprocess.Popen(
            command or [python, "-m", *args],
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            preexec_fn=preexec_fn,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        waited = wait_for(lambda: http_ok(f"{url}{health_path}"), process, timeout)
        if waited is Wait.EXITED:
            raise RuntimeError(f"{args[0]} exited early:\n{log.read_text()}")
        if waited is Wait.TIMEOUT:
            raise RuntimeError(f"{args[0]} did not become healthy:\n{log.read_text()}")
        yield Server(url=url, process=process, log=log)
    finally:
        interrupt(process)


# --- running as the service user --------------------------------------------------------------


def service_user() -> tuple[int, int] | None:
    """The uid/gid to run as when root, if that user exists (never creates it)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(SERVICE_USER)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def ensure_service_user() -> tuple[int, int] | None:
    """As root, the system user PostgreSQL runs as, created on first use."""
    if os.geteuid() != 0:
        return None
    if service_user() is None:
        subprocess.run(
            [
                "useradd",
                "--system",
                "--no-create-home",
                "--shell",
                "/usr/sbin/nologin",
                SERVICE_USER,
            ],
            check=True,
        )
    return service_user()


def demote(user: tuple[int, int] | None) -> Callable[[], None] | None:
    """A ``preexec_fn`` that switches the child to ``user`` (None: stay who we are)."""
    if user is None:
        return None

    def switch() -> None:
        os.setgid(user[1])
        os.setuid(user[0])

    return switch


# --- processes a detached stack recorded -------------------------------------------------------


def proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None when there is no such pid."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid it names one process exactly."""
    fields = proc_stat(pid)
    return int(fields[19]) if fields is not None else None


def alive(pid: int) -> bool:
    """True while ``pid`` runs; an exited child nobody has reaped yet (a zombie) counts as gone."""
    fields = proc_stat(pid)
    return fields is not None and fields[0] != "Z"


@dataclass(frozen=True)
class Started:
    """A process the stack started: its pid and start time, so a reused pid is never signalled."""

    pid: int
    ticks: int | None

    @classmethod
    def of(cls, pid: int) -> Started:
        return cls(pid, start_ticks(pid))

    def is_ours(self) -> bool:
        return alive(self.pid) and self.ticks is not None and start_ticks(self.pid) == self.ticks


def stop_group(process: Started) -> bool:
    """SIGINT to the process group ``process`` leads, SIGKILL after 10 s; False when it was gone
    already or its pid now names another process (never signalled)."""
    if not process.is_ours():
        return False
    try:
        os.killpg(process.pid, signal.SIGINT)
    except ProcessLookupError:
        return False
    deadline = time.monotonic() + 10
    while alive(process.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if alive(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    return True
