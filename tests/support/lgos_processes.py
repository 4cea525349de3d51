"""Real ``lgos serve`` and ``lgos worker`` processes on free ports, serving the test graphs."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.support.servers import Server, free_port, serve

TARGET = "tests.support.graphs:create_registry"


@contextmanager
def api_process(env: dict[str, str], log: Path, *, timeout: float = 30.0) -> Iterator[Server]:
    port = free_port()
    args = ["lgos", "serve", TARGET, "--port", str(port)]
    with serve(args, port=port, env=env, log=log, timeout=timeout) as s:
        yield s


@contextmanager
def worker_process(
    env: dict[str, str], log: Path, concurrency: int = 2, *, timeout: float = 30.0
) -> Iterator[Server]:
    port = free_port()
    args = ["lgos", "worker", TARGET, "--port", str(port), "--concurrency", str(concurrency)]
    with serve(args, port=port, env=env, log=log, timeout=timeout) as server:
        yield server
