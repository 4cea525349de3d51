"""Real gateway processes for tests: the LiteLLM proxy (via its supervisor), dbhub, the syncs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from lgos_gateways.mcp_demo_db import DBHUB_ENTRY, dbhub_command
from lgos_stack.paths import LITELLM_BIN as LITELLM_BIN
from lgos_stack.servers import serve_litellm as stack_serve_litellm

from tests.support.servers import ROOT, Server, free_port, serve

GATEWAY_KEY = "sk-gateway-test-key"
# The test PostgreSQL (this machine kind runs one on 5432), as the other integration tests use it.
MCP_ADMIN_URL = (
    os.environ.get("MCP_DEMO_ADMIN_URL")
    or os.environ.get("LGOS_TEST_POSTGRES_URI")
    or "postgresql://postgres@127.0.0.1:5432/postgres"
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
    config: Path, state: Path, env: Mapping[str, str], name: str = "litellm", timeout: float = 90.0
) -> Iterator[Server]:
    """The pinned LiteLLM proxy (.tools/litellm) under ``lgos-litellm-serve`` on a free port."""
    with stack_serve_litellm(
        config, state, {"OPENAI_GATEWAY_API_KEY": GATEWAY_KEY, **env}, name, timeout=timeout
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
    """dbhub (npm, .tools/dbhub) over the demo schema on the test PostgreSQL."""
    if not DBHUB_ENTRY.exists():
        raise RuntimeError("dbhub is not installed; `make test` installs it into .tools/dbhub")
    port = free_port()
    with serve(
        [],
        command=dbhub_command(port, setup_mcp_demo_db(state)),
        port=port,
        env={},
        log=state / "dbhub.log",
        health_path="/healthz",
    ) as server:
        yield server


def run_bifrost_sync(*args: str, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lgos_gateways.bifrost_sync", *args],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
