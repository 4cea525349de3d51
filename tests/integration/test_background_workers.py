"""Background Responses on the queue-backed engine: real PostgreSQL, Redis and worker processes.

Two API processes and two ``lgos worker`` processes share one database and one queue
(``queue_engine``, tests/support/queue_engine.py). The background contract
(tests/contract/test_background.py) runs on that engine too; the tests here add what only it
has: workers sharing the queue, a killed worker, graceful shutdown, a lost dispatch message,
creates raced across processes.
"""

from __future__ import annotations

import asyncio
import signal
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import psycopg
import pytest
import redis.asyncio as aioredis
from lgos.background.records import WORKER_LOST_MESSAGE
from lgos.background.worker import SHUTDOWN_MESSAGE
from openai import AsyncOpenAI
from psycopg.rows import dict_row

from tests.support.background import poll, slow_background, wait_for
from tests.support.clients import sdk_client, sdk_fixture
from tests.support.lgos_processes import api_process, worker_process
from tests.support.private_servers import PrivateRedis
from tests.support.queue_engine import (
    GRACE,
    HEARTBEAT,
    REQUEUE_AFTER,
    STALE_AFTER,
    SWEEP_INTERVAL,
    Engine,
)
from tests.support.shared_state import REDIS_URL

# The stated bound for a dead worker's Response to fail: stale_after + one sweep interval
# (+ slack for process scheduling on a loaded CI machine).
LOST_BOUND = STALE_AFTER + SWEEP_INTERVAL + 2.0


@pytest.fixture(scope="module")
def isolated(queue_engine: Engine) -> Iterator[Engine]:
    """An API on a queue of its own, with no worker: each test starts (and kills) its own."""
    queue = f"lgos-test-isolated:{uuid.uuid4().hex[:8]}"
    env = {**queue_engine.env, "LGOS_BACKGROUND_QUEUE": queue}
    with api_process(env, queue_engine.logs / "api-isolated.log") as api:
        yield Engine(env, queue_engine.postgres_uri, queue, [api], [], queue_engine.logs)


client = sdk_fixture("queue_engine", lambda engine: engine.apis[0])
other_client = sdk_fixture("queue_engine", lambda engine: engine.apis[1])
isolated_client = sdk_fixture("isolated", lambda engine: engine.apis[0])


async def rows(postgres_uri: str, ids: list[str]) -> dict[str, dict[str, Any]]:
    async with await psycopg.AsyncConnection.connect(postgres_uri, row_factory=dict_row) as conn:
        cursor = await conn.execute(
            "SELECT id, status, worker, job FROM lgos_background_responses WHERE id = ANY(%s)",
            (ids,),
        )
        return {row["id"]: row for row in await cursor.fetchall()}


def worker_pid(name: str) -> int:
    return int(name.split(":")[1])


async def test_two_workers_share_the_queue(client: AsyncOpenAI, queue_engine: Engine) -> None:
    created = await asyncio.gather(
        *(client.responses.create(**slow_background(f"share {i}", 0.6)) for i in range(6))
    )
    done = await asyncio.gather(*(poll(client, r.id) for r in created))
    assert {r.status for r in done} == {"completed"}
    ran_on = {
        row["worker"]
        for row in (await rows(queue_engine.postgres_uri, [r.id for r in created])).values()
    }
    assert {worker_pid(name) for name in ran_on} == {w.process.pid for w in queue_engine.workers}


async def test_any_api_process_serves_any_response(
    client: AsyncOpenAI, other_client: AsyncOpenAI
) -> None:
    queued = await client.responses.create(**slow_background("from a", 0.2))
    done = await poll(other_client, queued.id)
    assert done.status == "completed"
    assert (await client.responses.retrieve(queued.id)).model_dump() == done.model_dump()


async def test_idempotent_create_raced_across_two_api_processes(
    client: AsyncOpenAI, other_client: AsyncOpenAI, queue_engine: Engine
) -> None:
    marker = f"race-{uuid.uuid4().hex}"
    key = {"Idempotency-Key": marker}
    body = slow_background(marker, 0.2)
    sdks = [client, other_client] * 5
    created = await asyncio.gather(*(c.responses.create(**body, extra_headers=key) for c in sdks))
    assert len({r.id for r in created}) == 1
    await poll(client, created[0].id)
    async with await psycopg.AsyncConnection.connect(queue_engine.postgres_uri) as conn:
        cursor = await conn.execute(
            "SELECT count(*) FROM lgos_background_responses WHERE job->'body'->>'input' = %s",
            (marker,),
        )
        assert await cursor.fetchone() == (1,)  # one run only, across both processes


async def test_cancel_a_queued_response_it_never_runs(
    isolated_client: AsyncOpenAI, isolated: Engine
) -> None:
    # No worker listens on this queue: the Response stays queued until cancelled.
    queued = await isolated_client.responses.create(**slow_background("never", 0))
    assert (await isolated_client.responses.retrieve(queued.id)).status == "queued"
    cancelled = await isolated_client.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"
    with worker_process(isolated.env, isolated.logs / "late-worker.log"):
        await asyncio.sleep(1.0)  # the worker reads the message and finds nothing to claim
        again = await isolated_client.responses.retrieve(queued.id)
    assert again.model_dump() == cancelled.model_dump()
    row = (await rows(isolated.postgres_uri, [queued.id]))[queued.id]
    assert row["worker"] is None  # never claimed


async def test_worker_killed_mid_run_fails_within_the_bound(
    isolated_client: AsyncOpenAI, isolated: Engine, markers: Path
) -> None:
    key = f"killed-{uuid.uuid4().hex[:8]}"
    with worker_process(isolated.env, isolated.logs / "doomed-worker.log") as doomed:
        queued = await isolated_client.responses.create(**slow_background(key, 60))
        await wait_for(markers / f"started-{key}")
        doomed.process.kill()
        doomed.process.wait()
        killed_at = time.monotonic()
        # Nobody polls: the other workers' sweep must notice the silence on its own.
        while (await rows(isolated.postgres_uri, [queued.id]))[queued.id]["status"] != "failed":
            assert time.monotonic() - killed_at < LOST_BOUND, "still in progress"
            await asyncio.sleep(0.1)
    failed = await isolated_client.responses.retrieve(queued.id)
    assert failed.status == "failed"
    assert failed.error is not None
    assert failed.error.code == "server_error"
    assert failed.error.message == WORKER_LOST_MESSAGE


async def test_graceful_shutdown_finishes_short_jobs_and_fails_long_ones(
    isolated_client: AsyncOpenAI, isolated: Engine, markers: Path
) -> None:
    short_key, long_key = f"short-{uuid.uuid4().hex[:8]}", f"long-{uuid.uuid4().hex[:8]}"
    with worker_process(isolated.env, isolated.logs / "stopping-worker.log") as stopping:
        short = await isolated_client.responses.create(**slow_background(short_key, 0.8))
        long = await isolated_client.responses.create(**slow_background(long_key, 60))
        await wait_for(markers / f"started-{short_key}")
        await wait_for(markers / f"started-{long_key}")
        stopping.process.send_signal(signal.SIGTERM)
        await asyncio.sleep(0.3)
        # Stopped taking jobs: this one waits for the next worker.
        later = await isolated_client.responses.create(**slow_background("after shutdown", 0))
        assert await asyncio.to_thread(stopping.process.wait, GRACE + 8) == 0
    assert (await isolated_client.responses.retrieve(short.id)).status == "completed"
    cut = await isolated_client.responses.retrieve(long.id)
    assert cut.status == "failed"
    assert cut.error is not None
    assert cut.error.message == SHUTDOWN_MESSAGE
    assert (markers / f"cancelled-{long_key}").exists()  # the graph run itself was stopped
    assert (await isolated_client.responses.retrieve(later.id)).status == "queued"
    with worker_process(isolated.env, isolated.logs / "next-worker.log"):
        assert (await poll(isolated_client, later.id)).status == "completed"


async def test_a_lost_dispatch_message_is_sent_again(
    isolated_client: AsyncOpenAI, isolated: Engine
) -> None:
    queued = await isolated_client.responses.create(**slow_background("lost message", 0))
    async with aioredis.from_url(REDIS_URL) as redis:
        await redis.delete(isolated.queue)  # as if Redis lost the stream
    with worker_process(isolated.env, isolated.logs / "requeue-worker.log"):
        done = await poll(isolated_client, queued.id, timeout=REQUEUE_AFTER + 15)
    assert done.status == "completed"


async def test_cancel_signal_stops_the_run_in_the_worker_process(
    client: AsyncOpenAI, markers: Path
) -> None:
    key = f"signal-{uuid.uuid4().hex[:8]}"
    queued = await client.responses.create(**slow_background(key, 60))
    await wait_for(markers / f"started-{key}")
    await client.responses.cancel(queued.id)
    await wait_for(markers / f"cancelled-{key}")  # the graph run in the worker process stopped
    await asyncio.sleep(HEARTBEAT * 2)
    assert (await client.responses.retrieve(queued.id)).status == "cancelled"


async def test_a_redis_outage_pauses_dispatch_and_running_jobs_finish(
    isolated: Engine, markers: Path
) -> None:
    """Redis restarting empty mid-run: the worker keeps its job (it needs only PostgreSQL),
    reads again once Redis is back (declaring its consumer group anew) and takes new jobs."""
    redis_server = PrivateRedis(isolated.logs / "private-redis.log")
    env = {
        **isolated.env,
        "LGOS_REDIS_URL": redis_server.url,
        "LGOS_BACKGROUND_QUEUE": f"lgos-test-outage:{uuid.uuid4().hex[:8]}",
    }
    key = f"outage-{uuid.uuid4().hex[:8]}"
    redis_server.start()
    try:
        with (
            api_process(env, isolated.logs / "api-outage.log") as api,
            worker_process(env, isolated.logs / "worker-outage.log") as worker,
        ):
            async with sdk_client(f"{api.url}/v1") as sdk:
                running = await sdk.responses.create(**slow_background(key, 4.0))
                await wait_for(markers / f"started-{key}")
                redis_server.stop()
                await asyncio.sleep(2.0)  # longer than redis-py's own reconnect attempts
                redis_server.start()
                done = await poll(sdk, running.id, timeout=20)
                assert done.status == "completed", done.error
                assert worker.process.poll() is None  # the worker lived through it
                after = await sdk.responses.create(**slow_background("after", 0))
                assert (await poll(sdk, after.id, timeout=20)).status == "completed"
    finally:
        redis_server.stop()


async def test_every_process_tunes_its_collector(queue_engine: Engine) -> None:
    """`lgos serve` and `lgos worker` both freeze their start-up objects and set
    LGOS_GC_THRESHOLDS (full collections would otherwise pause a busy worker's loop too)."""
    for name in ("api-a.log", "api-b.log", "worker-1.log", "worker-2.log"):
        tuned = [
            orjson.loads(line)
            for line in (queue_engine.logs / name).read_bytes().splitlines()
            if b'"collector tuned"' in line
        ]
        assert len(tuned) == 1, name
        assert tuned[0]["thresholds"] == [700, 10, 1000] and tuned[0]["frozen"] > 10_000
