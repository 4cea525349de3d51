"""Ports: each component's (fixed by the design, overridable from the environment) and free ones.

Free ports serve the benchmarks' and the tests' private servers (one picker for both).
"""

from __future__ import annotations

import os
import random
import socket
import time
from dataclasses import dataclass

# Ports are drawn below the kernel's ephemeral range (32768+ on Linux): a port the kernel hands
# out for bind(0) is released at once and can be handed out again on the next call, or taken by
# an outgoing connection, before the server that was meant to get it binds.
_PORT_RANGE = (20000, 32000)
_handed_out: set[int] = set()
_rng = random.Random(os.getpid() ^ time.monotonic_ns())


def free_port() -> int:
    """A port nothing listens on and no earlier call in this process returned."""
    for _ in range(1000):
        port = _rng.randrange(*_PORT_RANGE)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free port found")


PORT_VARIABLES: dict[str, tuple[str, int]] = {
    "postgres": ("POSTGRES_PORT", 3001),
    "redis": ("REDIS_PORT", 3008),
    "searxng": ("SEARXNG_PORT", 3005),
    "embeddings": ("EMBEDDINGS_PORT", 3010),
    "files": ("FILES_PORT", 3006),
    "offline_model": ("OFFLINE_MODEL_PORT", 3007),
    "lgos": ("LGOS_PORT", 3004),
    "lgos_second": ("LGOS_SECOND_PORT", 3015),
    "lgos_worker": ("LGOS_WORKER_PORT", 3011),
    "mcp_db": ("MCP_DEMO_DB_PORT", 3012),
    "gateway": ("OPENAI_GATEWAY_PORT", 3000),
    "chainlit": ("CHAINLIT_PORT", 3002),
    "open_webui": ("OPEN_WEBUI_PORT", 3003),
    "prometheus": ("PROMETHEUS_PORT", 3014),
    "phoenix": ("PHOENIX_PORT", 3013),
}
"""Each component's port variable and its fixed default."""


@dataclass(frozen=True)
class Ports:
    """Every component's port, read once from the environment (tests pick free ones)."""

    postgres: int
    redis: int
    searxng: int
    embeddings: int
    files: int
    offline_model: int
    lgos: int
    lgos_second: int
    """The second LGOS instance: the gateway routes every graph to both."""
    lgos_worker: int
    """The worker has no fixed port in the design; it serves only its health check."""
    mcp_db: int
    gateway: int
    chainlit: int
    open_webui: int
    prometheus: int
    phoenix: int
    """Phoenix's web UI and OTLP/HTTP receiver."""

    @classmethod
    def from_env(cls) -> Ports:
        values: dict[str, int] = {}
        for name, (variable, default) in PORT_VARIABLES.items():
            raw = os.environ.get(variable, str(default))
            try:
                port = int(raw)
            except ValueError:
                raise SystemExit(f"{variable}={raw!r} is not a port number") from None
            if not 0 < port < 65536:
                raise SystemExit(f"{variable}={port} is outside 1-65535")
            values[name] = port
        return cls(**values)


def postgres_url(port: int, database: str = "postgres") -> str:
    """The stack's PostgreSQL (trust authentication on loopback) as the ``postgres`` user."""
    return f"postgresql://postgres@127.0.0.1:{port}/{database}"
