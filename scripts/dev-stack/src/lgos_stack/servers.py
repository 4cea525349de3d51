"""The servers the stack, its tests and its benchmarks run: their command lines in one place, and
LGOS, LiteLLM, SearXNG and Redis started on a free port."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from lgos_stack.paths import (
    LITELLM_BIN,
    PG_BIN,
    PROMETHEUS_BIN,
    SEARXNG_DIR,
    SEARXNG_PYTHON,
)
from lgos_stack.ports import free_port
from lgos_stack.processes import Server, Wait, interrupt, redis_pong, serve, wait_for


def redis_command(port: int) -> list[str]:
    """``redis-server`` on loopback without persistence: a restart comes back empty."""
    binary = shutil.which("redis-server") or "redis-server"
    return [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]


def postgres_command(data: Path, port: int) -> list[str]:
    """The embedded PostgreSQL over ``data``, on loopback TCP only (no Unix socket)."""
    return [
        *(str(PG_BIN / "postgres"), "-D", str(data), "-p", str(port)),
        *("-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="),
    ]


def initdb_command(data: Path, *options: str) -> list[str]:
    """A new cluster in ``data``: superuser ``postgres``, trust authentication."""
    return [str(PG_BIN / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust", *options]


def prometheus_command(port: int, config: Path, data: Path) -> list[str]:
    """Prometheus on loopback over ``config``, its time series in ``data`` (two days kept)."""
    return [
        *(str(PROMETHEUS_BIN), f"--config.file={config}", f"--storage.tsdb.path={data}"),
        *(f"--web.listen-address=127.0.0.1:{port}", "--storage.tsdb.retention.time=2d"),
    ]


def prometheus_config(scrapes: Mapping[str, int], interval: str = "2s") -> str:
    """A config scraping ``/metrics`` of each job name -> loopback port."""
    jobs = "".join(
        f"  - job_name: {name}\n    static_configs:\n      - targets: ['127.0.0.1:{port}']\n"
        for name, port in scrapes.items()
    )
    return (
        f"global:\n  scrape_interval: {interval}\n  evaluation_interval: {interval}\n"
        f"scrape_configs:\n{jobs}"
    )


def phoenix_env(port: int, working_dir: Path) -> dict[str, str]:
    """Arize Phoenix on loopback, configured by its environment only: its SQLite database in
    ``working_dir``, nothing fetched from outside, no telemetry, no server-side agent."""
    return {
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_WORKING_DIR": str(working_dir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
        "PHOENIX_ALLOW_EXTERNAL_RESOURCES": "false",
        "PHOENIX_DISABLE_AGENT_ASSISTANT": "true",
        # Its OTLP/gRPC receiver always starts, on every interface; the stack sends OTLP/HTTP,
        # so port 0 lets the kernel give it any free port rather than one of the design's.
        "PHOENIX_GRPC_PORT": "0",
    }


def searxng_settings(port: int, into: Path) -> Path:
    """SearXNG's settings rendered for ``port`` (absolute engine path, a fresh secret)."""
    rendered = (
        (SEARXNG_DIR / "settings.template.yml")
        .read_text()
        .replace("@CORPUS_DIR@", str(SEARXNG_DIR))
        .replace("@PORT@", str(port))
        .replace("@SECRET@", secrets.token_hex(16))
    )
    into.write_text(rendered)
    return into


def require(path: Path, what: str, venv: str) -> None:
    """Refuse to start ``what`` when its pinned install (``.tools/<venv>``) is missing."""
    if not path.exists():
        raise RuntimeError(f"{what} is not installed; `make test` installs it into .tools/{venv}")


@contextmanager
def serve_lgos(
    command: str, target: str, *, env: Mapping[str, str], log: Path, timeout: float = 30.0
) -> Iterator[Server]:
    """``lgos serve`` or ``lgos worker`` for ``target`` on a free port (its health route)."""
    port = free_port()
    args = ["lgos", command, target, "--port", str(port)]
    with serve(args, port=port, env=env, log=log, timeout=timeout) as s:
        yield s


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
    require(litellm, "LiteLLM", "litellm")
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


@contextmanager
def serve_searxng(state: Path) -> Iterator[Server]:
    """The real SearXNG (its own pinned venv, installed by the Makefile) over the seeded corpus."""
    require(SEARXNG_PYTHON, "SearXNG", "searxng")
    port = free_port()
    settings = searxng_settings(port, state / "searxng-settings.yml")
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
def serve_redis(state: Path) -> Iterator[str]:
    """A private redis-server on a free port (nothing shared is flushed or filled): its URL."""
    if shutil.which("redis-server") is None:
        raise SystemExit("redis-server is not installed (`make sync` installs it)")
    port = free_port()
    with (state / "redis.log").open("wb") as log:
        process = subprocess.Popen(redis_command(port), stdout=log, stderr=subprocess.STDOUT)
    try:
        if wait_for(lambda: redis_pong(port), process, timeout=15) is not Wait.READY:
            raise SystemExit("redis-server did not start")
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        interrupt(process)
