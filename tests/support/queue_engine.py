"""The queue-backed background engine as tests run it: API and ``lgos worker`` processes sharing
one fresh PostgreSQL database and one Redis stream, with short heartbeats and sweeps.

Registered as a plugin by ``tests/conftest.py``: the ``queue_engine`` fixture is one of the
engines the background contract runs against (``tests/support/engines.py``).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from tests.support.lgos_processes import api_process, worker_process
from tests.support.servers import Server
from tests.support.shared_state import REDIS_URL, fresh_database, shared_env

HEARTBEAT = 0.3
STALE_AFTER = 1.5
SWEEP_INTERVAL = 0.3
GRACE = 1.5
REQUEUE_AFTER = 2.0


def engine_env(base: dict[str, str], queue: str, markers: Path) -> dict[str, str]:
    """``base`` plus the queue-backed engine on ``queue``, its timings short enough for tests."""
    return {
        **base,
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": queue,
        "LGOS_TEST_MARKERS": str(markers),
        "LGOS_WORKER_HEARTBEAT": str(HEARTBEAT),
        "LGOS_WORKER_STALE_AFTER": str(STALE_AFTER),
        "LGOS_BACKGROUND_SWEEP_INTERVAL": str(SWEEP_INTERVAL),
        "LGOS_WORKER_SHUTDOWN_GRACE": str(GRACE),
        "LGOS_BACKGROUND_REQUEUE_AFTER": str(REQUEUE_AFTER),
    }


@dataclass
class Engine:
    env: dict[str, str]
    postgres_uri: str
    queue: str
    apis: list[Server]
    workers: list[Server]
    logs: Path


@pytest.fixture(scope="module")
def queue_engine(
    offline_model: Server, markers: Path, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Engine]:
    """Two API processes and two workers on one queue."""
    logs = tmp_path_factory.mktemp("background")
    queue = f"lgos-test:{uuid.uuid4().hex[:8]}"
    with fresh_database() as postgres_uri:
        env = engine_env(shared_env(postgres_uri, offline_model, logs, 5.0), queue, markers)
        try:
            with (
                api_process(env, logs / "api-a.log") as a,
                api_process(env, logs / "api-b.log") as b,
                worker_process(env, logs / "worker-1.log") as w1,
                worker_process(env, logs / "worker-2.log") as w2,
            ):
                yield Engine(env, postgres_uri, queue, [a, b], [w1, w2], logs)
        finally:
            with redis.Redis.from_url(REDIS_URL) as client:
                client.delete(queue)  # this engine's stream only; the server is shared
