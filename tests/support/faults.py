"""Helpers of the PostgreSQL/Redis fault tests: the stack they run, timing, the 503 check."""

from __future__ import annotations

import time
import uuid
from collections.abc import Awaitable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import openai

from tests.support.lgos_processes import api_process, worker_process
from tests.support.servers import Server


def distributed_env(base: dict[str, str], queue: str, markers: Path) -> dict[str, str]:
    """The distributed background engine with a quick heartbeat and sweep, and a requeue
    timeout far beyond every test: a job that completes did so without a requeue."""
    return {
        **base,
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": f"{queue}:{uuid.uuid4().hex[:8]}",
        "LGOS_TEST_MARKERS": str(markers),
        "LGOS_WORKER_HEARTBEAT": "0.5",
        "LGOS_WORKER_STALE_AFTER": "10",
        "LGOS_BACKGROUND_SWEEP_INTERVAL": "0.5",
        "LGOS_BACKGROUND_REQUEUE_AFTER": "120",
    }


@contextmanager
def two_apis_and_a_worker(env: dict[str, str], logs: Path) -> Iterator[list[Server]]:
    with (
        api_process(env, logs / "api-a.log") as a,
        api_process(env, logs / "api-b.log") as b,
        worker_process(env, logs / "worker.log"),
    ):
        yield [a, b]


async def timed(call: Awaitable[Any]) -> tuple[Any, float]:
    """What ``call`` returned or raised, and how long it took (seconds)."""
    started = time.monotonic()
    try:
        result: Any = await call
    except Exception as exc:
        result = exc
    return result, time.monotonic() - started


def assert_unavailable(result: Any, took: float, bound: float) -> None:
    """A clear 503 ``service_unavailable`` envelope, within ``bound`` seconds."""
    assert isinstance(result, openai.APIStatusError), result
    assert result.status_code == 503, (result.status_code, result.body)
    assert isinstance(result.body, dict)
    assert result.body["code"] == "service_unavailable"
    assert result.body["type"] == "server_error"
    assert took < bound, took
