"""A Docker engine of this checkout's own, for machines without a service manager.

Debian's ``docker.io`` (the engine), ``docker-compose`` (Compose v1) and ``debootstrap`` are
installed with apt when missing; ``dockerd`` is started by hand with its socket, data root, exec
root, pid file and log under the state folder (``.dev/docker/``) and stopped by its pid. One
engine per machine: two would fight over the default bridge and the firewall chains, so starting
waits (or refuses) while an engine of another checkout runs.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

from lgos_stack.paths import state_dir
from lgos_stack.processes import alive

PACKAGES = {
    "dockerd": "docker.io",
    "docker-compose": "docker-compose",
    "debootstrap": "debootstrap",
}
"""Each command the engine needs and the Debian package that installs it."""
DOCKER_CLI = "/usr/bin/docker"
"""Debian's client (the engine's own version): it builds with the engine's BuildKit."""
SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
LOCK = Path("/tmp/lgos-docker-engine.lock")
"""Held while one checkout checks for other engines and starts its own."""
SOCKET_PATH_MAX = 100
"""A unix socket path longer than this (the kernel's limit is 107 bytes) moves to /tmp."""

Say = Callable[[str], None]


class EngineError(RuntimeError):
    """The engine could not be installed, started or reached; the message says why."""


def missing_packages() -> list[str]:
    return [pkg for cmd, pkg in PACKAGES.items() if shutil.which(cmd, path=SYSTEM_PATH) is None]


def install_packages(say: Say) -> None:
    """apt-get install what is missing (as root; the machine's own apt sources)."""
    missing = missing_packages()
    if not missing:
        return
    if os.geteuid() != 0:
        raise EngineError(f"installing {', '.join(missing)} needs root (apt-get)")
    say(f"installing {', '.join(missing)} with apt")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    subprocess.run(["nice", "-n", "10", "apt-get", "update", "-qq"], check=True, env=env)
    install = ["apt-get", "install", "-y", "-qq", "--no-install-recommends", *missing]
    subprocess.run(["nice", "-n", "10", *install], check=True, env=env)


@dataclass(frozen=True)
class Engine:
    """The files of one engine: data under ``root``, the socket and exec root where they fit."""

    root: Path

    @classmethod
    def of_checkout(cls) -> Engine:
        return cls(state_dir() / "docker")

    @property
    def run_dir(self) -> Path:
        """Socket and exec root: under ``root`` unless its path is too long for a socket."""
        if len(str(self.root / "run" / "docker.sock")) <= SOCKET_PATH_MAX:
            return self.root / "run"
        digest = hashlib.sha256(str(self.root).encode()).hexdigest()[:12]
        return Path("/tmp") / f"lgos-docker-{digest}"

    @property
    def socket(self) -> Path:
        return self.run_dir / "docker.sock"

    @property
    def pidfile(self) -> Path:
        return self.root / "docker.pid"

    @property
    def log(self) -> Path:
        return self.root / "dockerd.log"

    @property
    def host(self) -> str:
        """The value of DOCKER_HOST that reaches this engine."""
        return f"unix://{self.socket}"

    def env(self) -> dict[str, str]:
        """The environment the docker and docker-compose clients need for this engine."""
        return {
            **os.environ,
            "DOCKER_HOST": self.host,
            "DOCKER_BUILDKIT": "1",
            "COMPOSE_DOCKER_CLI_BUILD": "1",
        }

    def command(self) -> list[str]:
        return [
            "dockerd",
            "--host",
            self.host,
            "--data-root",
            str(self.root / "data"),
            "--exec-root",
            str(self.run_dir / "exec"),
            "--pidfile",
            str(self.pidfile),
        ]

    def answers(self) -> bool:
        return ping(self.socket)

    def pid(self) -> int | None:
        """The pid of this engine's dockerd while it runs (never another process's)."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (FileNotFoundError, ValueError):
            return None
        return pid if alive(pid) and str(self.pidfile) in cmdline(pid) else None


def ping(sock: Path) -> bool:
    """The engine's ``/_ping`` answers OK on the unix socket ``sock``."""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as client:
            client.settimeout(2.0)
            client.connect(str(sock))
            client.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return client.recv(4096).endswith(b"OK")
    except OSError:
        return False


def cmdline(pid: int) -> list[str]:
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return []
    return [part.decode(errors="replace") for part in raw.split(b"\0") if part]


def engines() -> dict[int, list[str]]:
    """Every running ``dockerd`` on the machine: pid and command line."""
    found = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            args = cmdline(int(entry.name))
            if args and Path(args[0]).name == "dockerd" and alive(int(entry.name)):
                found[int(entry.name)] = args
    return found


def others(engine: Engine) -> dict[int, list[str]]:
    return {pid: args for pid, args in engines().items() if str(engine.pidfile) not in args}


@contextlib.contextmanager
def machine_lock() -> Iterator[None]:
    with LOCK.open("a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def wait_for_others(engine: Engine, wait: float, say: Say) -> None:
    """Return once no other checkout's engine runs; EngineError after ``wait`` seconds."""
    deadline = time.monotonic() + wait
    announced = False
    while busy := others(engine):
        if time.monotonic() >= deadline:
            described = "; ".join(f"pid {pid}: {' '.join(args)}" for pid, args in busy.items())
            raise EngineError(
                "another Docker engine runs on this machine and two would share one bridge "
                f"({described}); stop it, or point DOCKER_HOST at it"
            )
        if not announced:
            say(f"waiting for the Docker engine (pid {min(busy)}) of another checkout to stop")
            announced = True
        time.sleep(2.0)


def start(engine: Engine, say: Say, *, wait: float = 0.0, timeout: float = 60.0) -> bool:
    """Start this checkout's engine unless it answers already; True when this call started it."""
    if engine.answers():
        return False
    with machine_lock():
        wait_for_others(engine, wait, say)
        if engine.answers():
            return False
        engine.root.mkdir(parents=True, exist_ok=True)
        engine.run_dir.mkdir(parents=True, exist_ok=True)
        engine.socket.unlink(missing_ok=True)
        engine.pidfile.unlink(missing_ok=True)
        say(f"starting dockerd (DOCKER_HOST={engine.host})")
        env = {**os.environ, "PATH": SYSTEM_PATH}
        with engine.log.open("ab") as log:
            process = subprocess.Popen(
                engine.command(),
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        deadline = time.monotonic() + timeout
        while not engine.answers():
            if process.poll() is not None or time.monotonic() > deadline:
                tail = engine.log.read_text(errors="replace").splitlines()[-15:]
                with contextlib.suppress(ProcessLookupError):
                    process.kill()
                raise EngineError("dockerd did not start:\n" + "\n".join(tail))
            time.sleep(0.2)
    return True


def stop(engine: Engine, say: Say, timeout: float = 40.0) -> bool:
    """SIGTERM to this engine's dockerd (it stops its containers first), SIGKILL after
    ``timeout`` seconds; False when it was not running."""
    pid = engine.pid()
    if pid is None:
        return False
    say(f"stopping dockerd (pid {pid})")
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if alive(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)
    return True


def docker(
    engine: Engine, *args: str, env: Mapping[str, str] | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run the docker client against ``engine``; its output is returned, not printed. With
    ``check``, a failure raises EngineError carrying the client's last lines."""
    result = subprocess.run(
        [DOCKER_CLI, *args],
        env={**engine.env(), **(env or {})},
        capture_output=True,
        text=True,
    )
    if check and result.returncode != 0:
        tail = (result.stdout + result.stderr).strip().splitlines()[-25:]
        raise EngineError(f"docker {args[0]} failed:\n" + "\n".join(tail))
    return result
