"""Server processes for the benchmarks and the tests: start one, wait until healthy, stop it.

``tests.support.servers`` re-exports these; scripts import them from here, as scripts never
import ``tests``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

from scripts.ports import free_port

ROOT = Path(__file__).resolve().parents[1]


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
    log: Path,
    timeout: float = 30.0,
    python: str = sys.executable,
    health_path: str = "/health",
    command: list[str] | None = None,
) -> Iterator[Server]:
    """Run ``python -m ...args`` (or ``command``) until its health route answers; stop it after."""
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), **env}
    with log.open("wb") as out:
        process = subprocess.Popen(
            command or [python, "-m", *args],
            env=full_env,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + timeout
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"{args[0]} exited early:\n{log.read_text()}")
            try:
                if httpx.get(f"{url}{health_path}", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{args[0]} did not become healthy:\n{log.read_text()}")
            time.sleep(0.1)
        yield Server(url=url, process=process, log=log)
    finally:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


LITELLM_BIN = ROOT / ".tools" / "litellm" / "bin" / "litellm"


@contextmanager
def serve_litellm(
    config: Path,
    state: Path,
    env: Mapping[str, str],
    name: str = "litellm",
    *,
    litellm: Path = LITELLM_BIN,
    timeout: float = 90.0,
    litellm_args: Sequence[str] = (),
) -> Iterator[Server]:
    """The pinned LiteLLM proxy (.tools/litellm) under ``lgos-litellm-serve`` on a free port; the
    proxy's own pid is in ``state/<name>.pid.child``."""
    if not litellm.exists():
        raise RuntimeError("LiteLLM is not installed; `make test` installs it into .tools/litellm")
    port = free_port()
    pid_file = state / f"{name}.pid"
    args = ["lgos_gateways.litellm_serve", "--config", str(config), "--port", str(port)]
    with serve(
        [*args, "--pid-file", str(pid_file), "--litellm", str(litellm), "--", *litellm_args],
        port=port,
        env=env,
        log=state / f"{name}.log",
        timeout=timeout,
        health_path="/health/liveliness",
    ) as server:
        yield server


SEARXNG_DIR = ROOT / "services" / "searxng"
SEARXNG_PYTHON = ROOT / ".tools" / "searxng" / "bin" / "python"


@contextmanager
def serve_searxng(state: Path) -> Iterator[Server]:
    """The real SearXNG (its own pinned venv, installed by the Makefile) over the seeded corpus."""
    if not SEARXNG_PYTHON.exists():
        raise RuntimeError("SearXNG is not installed; `make test` installs it into .tools/searxng")
    port = free_port()
    settings = state / "searxng-settings.yml"
    settings.write_text(
        (SEARXNG_DIR / "settings.template.yml")
        .read_text()
        .replace("@CORPUS_DIR@", str(SEARXNG_DIR))
        .replace("@PORT@", str(port))
        .replace("@SECRET@", os.urandom(16).hex())
    )
    with serve(
        ["searx.webapp"],
        port=port,
        env={"SEARXNG_SETTINGS_PATH": str(settings)},
        log=state / "searxng.log",
        python=str(SEARXNG_PYTHON),
        health_path="/healthz",
    ) as server:
        yield server


@contextmanager
def serve_lgos(
    command: str, target: str, *, env: Mapping[str, str], log: Path, timeout: float = 30.0
) -> Iterator[Server]:
    """``lgos serve`` or ``lgos worker`` for ``target`` on a free port (its health route)."""
    port = free_port()
    args = ["lgos", command, target, "--port", str(port)]
    with serve(args, port=port, env=env, log=log, timeout=timeout) as s:
        yield s
