"""Redis restarted empty, or unreachable for a while, under two LGOS processes and a worker.

Redis is a PRIVATE ``redis-server`` without persistence (a restart comes back empty), reached
through the test fault injector (``tests/support/fault_proxy.py``) so a test can also make it
unreachable: connections reset, new ones blackholed. PostgreSQL is the shared server (a fresh
database). The requeue timeout is far beyond every bound here, so a background job that
completes did so through recovery, not a requeue. Run with ``-s`` for the printed figures.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import openai
import pytest
from lgos.interrupts.coordinator import Lease
from lgos.interrupts.redis_coordinator import RedisCoordinator
from openai import AsyncOpenAI

from tests.support.background import poll, slow_background
from tests.support.clients import sdk_pair_fixture
from tests.support.fault_proxy import FaultProxy
from tests.support.faults import (
    assert_unavailable,
    distributed_env,
    timed,
    two_apis_and_a_worker,
)
from tests.support.interrupts import resume_of
from tests.support.private_servers import PrivateRedis
from tests.support.servers import Server
from tests.support.shared_state import shared_env

REDIS_TIMEOUT = 2.0
FAIL_FAST_BOUND = REDIS_TIMEOUT * 2 + 2.0  # the wait, its one retry, scheduling slack
PROMPT = 10.0  # "promptly": a job completes this soon after Redis is back (requeue: 120 s)


@dataclass
class Stack:
    redis: PrivateRedis
    proxy: FaultProxy
    apis: list[Server]


@pytest.fixture(scope="module")
def private_redis(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrivateRedis]:
    server = PrivateRedis(tmp_path_factory.mktemp("faults-redis") / "redis.log")
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def stack(
    private_redis: PrivateRedis,
    postgres_uri: str,
    offline_model: Server,
    markers: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("faults-redis-stack")
    with FaultProxy(private_redis.port) as proxy:
        base = {
            **shared_env(postgres_uri, offline_model, logs, 5.0),
            "LGOS_REDIS_URL": f"redis://127.0.0.1:{proxy.port}/0",
            "LGOS_REDIS_TIMEOUT": str(REDIS_TIMEOUT),
        }
        env = distributed_env(base, "lgos-faults-redis", markers)
        with two_apis_and_a_worker(env, logs) as apis:
            yield Stack(private_redis, proxy, apis)


clients = sdk_pair_fixture("stack", lambda stack: stack.apis)


def runs(markers: Path, key: str) -> int:
    path = markers / f"started-{key}"
    return len(path.read_text().splitlines()) if path.exists() else 0


async def test_lease_tokens_stay_unique_across_an_empty_restart(
    private_redis: PrivateRedis,
) -> None:
    """Regression: the fencing counter restarted at 1 with an empty Redis, so a new grant could
    equal a stale holder's token and both would pass the fence."""
    coordinator = RedisCoordinator(private_redis.url, ttl=30, timeout=REDIS_TIMEOUT)
    try:
        key = f"fence-{uuid.uuid4().hex}"
        stale = await coordinator.acquire(key)
        assert stale is not None
        private_redis.restart()  # every lease and counter gone
        fresh = await coordinator.acquire(key)  # the first call after it is back succeeds
        assert fresh is not None
        assert fresh.token > stale.token
        assert not await coordinator.holds(stale)
        assert not await coordinator.holds(Lease(key, 1))
        assert await coordinator.holds(fresh)
    finally:
        await coordinator.close()


async def test_redis_restarted_empty(
    stack: Stack, clients: tuple[AsyncOpenAI, AsyncOpenAI], markers: Path
) -> None:
    a, b = clients
    paused = await a.responses.create(model="interruptible-approval", input="Ship it")
    stack.redis.restart()
    back_at = time.monotonic()
    # The first requests after it is back: a resume, a new run, a background job.
    (resumed, t_resume), (started, t_start), (queued, t_submit) = await asyncio.gather(
        timed(b.responses.create(**resume_of(paused, "approve"))),
        timed(a.responses.create(model="slow-after-resume", input="race")),
        timed(a.responses.create(**slow_background(f"r-{back_at}", 0))),
    )
    assert not isinstance(resumed, Exception), resumed
    assert resumed.output_text.startswith("Decision: approved.")
    assert not isinstance(started, Exception), started
    assert not isinstance(queued, Exception), queued
    done = await poll(b, queued.id, timeout=PROMPT)
    assert done.status == "completed", done.error
    t_job = time.monotonic() - back_at
    # Leases work again: racing resumes of one run on both processes, exactly one runs it.
    results = await asyncio.gather(
        *(c.responses.create(**resume_of(started, "go")) for c in (a, b, b)),
        return_exceptions=True,
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1, results
    assert winners[0].output_text == "done after go"
    assert all(isinstance(r, openai.ConflictError) for r in results if r not in winners)
    print(
        f"\n[redis-restart-empty] first success after restart: resume {t_resume:.2f}s, "
        f"new run {t_start:.2f}s, background create {t_submit:.2f}s, job done {t_job:.2f}s"
    )


async def test_redis_unreachable_for_a_while(
    stack: Stack, clients: tuple[AsyncOpenAI, AsyncOpenAI], markers: Path
) -> None:
    a, b = clients
    paused = await a.responses.create(model="interruptible-approval", input="Ship it")
    key = f"unreachable-{uuid.uuid4().hex[:8]}"
    stack.proxy.set_mode("blackhole")
    stack.proxy.cut()
    down_at = time.monotonic()
    # A resume during the outage: a clear 503, not a hang.
    failed, t_fail = await timed(b.responses.create(**resume_of(paused, "approve")))
    assert_unavailable(failed, t_fail, FAIL_FAST_BOUND)
    # A background create still answers queued (the row is durable); dispatch waits for Redis.
    queued, t_create = await timed(a.responses.create(**slow_background(key, 0)))
    assert not isinstance(queued, Exception), queued
    assert queued.status == "queued"
    assert t_create < FAIL_FAST_BOUND, t_create
    stack.redis.restart()  # and it comes back empty
    stack.proxy.set_mode("forward")
    back_at = time.monotonic()
    resumed, t_resume = await timed(b.responses.create(**resume_of(paused, "approve")))
    assert not isinstance(resumed, Exception), resumed
    assert resumed.output_text.startswith("Decision: approved.")
    done = await poll(a, queued.id, timeout=PROMPT)
    t_job = time.monotonic() - back_at
    assert done.status == "completed", done.error
    assert runs(markers, key) == 1
    print(
        f"\n[redis-unreachable] outage {back_at - down_at:.1f}s; resume during it: 503 in "
        f"{t_fail:.2f}s; background create during it: queued in {t_create:.2f}s; after it: "
        f"resume {t_resume:.2f}s, the job queued during the outage done {t_job:.2f}s"
    )


async def test_a_run_in_flight_when_redis_loses_its_lease_commits_once(
    stack: Stack, clients: tuple[AsyncOpenAI, AsyncOpenAI]
) -> None:
    """Redis restarts empty while A runs a resume: B may take the run over, and A's lease check
    before its checkpoint write refuses (409 run_busy), so exactly one outcome is recorded."""
    a, b = clients
    paused = await a.responses.create(model="slow-after-resume", input="fenced")
    resume = resume_of(paused, "go", metadata={"lgos_settings": '{"seconds": 2.5}'})
    first = asyncio.ensure_future(a.responses.create(**resume))
    await asyncio.sleep(0.8)  # A holds the lease and works
    stack.redis.restart()
    second = await b.responses.create(**resume)
    assert second.output_text == "done after go"
    with pytest.raises(openai.ConflictError) as lost:
        await first
    assert lost.value.code == "run_busy"
    with pytest.raises(openai.ConflictError) as gone:  # completed once: nothing left to resume
        await a.responses.create(**resume)
    assert gone.value.code == "interrupt_state_conflict"
