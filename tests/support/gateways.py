"""Real gateway processes for tests: the LiteLLM proxy (via its supervisor), dbhub, the syncs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.support.servers import ROOT, Server, free_port, serve

LITELLM_BIN = ROOT / ".tools" / "litellm" / "bin" / "litellm"
DBHUB_DIR = ROOT / ".tools" / "dbhub"
DBHUB_ENTRY = DBHUB_DIR / "node_modules" / "@bytebase" / "dbhub" / "dist" / "index.js"
LOOPBACK = ROOT / "gateways" / "mcp" / "loopback.cjs"
GATEWAY_KEY = "sk-gateway-test-key"
MCP_ADMIN_URL = os.environ.get(
    "MCP_DEMO_ADMIN_URL", "postgresql://postgres@127.0.0.1:5432/postgres"
)


def run_litellm_sync(
    *args: str, env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lgos_gateways.litellm_sync", *args],
        env={**os.environ, "OPENAI_GATEWAY_API_KEY": GATEWAY_KEY, **(env or {})},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


@contextmanager
def serve_litellm(
    config: Path, state: Path, env: Mapping[str, str], name: str = "litellm"
) -> Iterator[Server]:
    """The pinned LiteLLM proxy (.tools/litellm) under ``lgos-litellm-serve`` on a free port."""
    if not LITELLM_BIN.exists():
        raise RuntimeError("LiteLLM is not installed; `make test` installs it into .tools/litellm")
    port = free_port()
    pid_file = state / f"{name}.pid"
    with serve(
        [
            "lgos_gateways.litellm_serve",
            "--config",
            str(config),
            "--port",
            str(port),
            "--pid-file",
            str(pid_file),
            "--litellm",
            str(LITELLM_BIN),
        ],
        port=port,
        env={"OPENAI_GATEWAY_API_KEY": GATEWAY_KEY, **env},
        log=state / f"{name}.log",
        timeout=90.0,
        health_path="/health/liveliness",
    ) as server:
        yield server


def setup_mcp_demo_db(state: Path) -> Path:
    """The demo schema and read-only role on the test PostgreSQL; returns dbhub's config."""
    config = state / "dbhub.toml"
    subprocess.run(
        [
            sys.executable,
            "-m",
            "lgos_gateways.mcp_demo_db",
            "--admin-url",
            MCP_ADMIN_URL,
            "--dbhub-config",
            str(config),
        ],
        check=True,
        capture_output=True,
        cwd=ROOT,
        timeout=60,
    )
    return config


@contextmanager
def serve_dbhub(state: Path) -> Iterator[Server]:
    """dbhub (npm, .tools/dbhub) over the demo schema, kept on loopback by the preload."""
    if not DBHUB_ENTRY.exists():
        raise RuntimeError("dbhub is not installed; `make test` installs it into .tools/dbhub")
    config = setup_mcp_demo_db(state)
    port = free_port()
    log = state / "dbhub.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                "node",
                "--require",
                str(LOOPBACK),
                str(DBHUB_ENTRY),
                "--transport",
                "http",
                "--port",
                str(port),
                "--config",
                str(config),
            ],
            cwd=DBHUB_DIR,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            if process.poll() is not None:
                raise RuntimeError(f"dbhub exited early:\n{log.read_text()}")
            try:
                if httpx.get(f"{url}/healthz", timeout=1.0).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"dbhub did not become healthy:\n{log.read_text()}")
            time.sleep(0.2)
        yield Server(url=url, process=process, log=log)
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def run_bifrost_sync(*args: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lgos_gateways.bifrost_sync", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
