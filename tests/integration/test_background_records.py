"""The distributed engine's PostgreSQL records, raced on a real server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import psycopg
import pytest
from lgos.background.backend import BackgroundJob, IdempotencyKey, IdempotencyKeyReusedError
from lgos.background.distributed import DistributedBackend
from lgos.background.queue import make_broker
from lgos.background.records import WORKER_LOST_MESSAGE, BackgroundRecords
from lgos.background.worker import Worker
from lgos.settings import LGOSSettings
from lgos.storage import open_pool

from tests.support.servers import free_port
from tests.support.shared_state import REDIS_URL


@pytest.fixture
async def records(postgres_uri: str) -> AsyncIterator[BackgroundRecords]:
    async with AsyncExitStack() as stack:
        store = BackgroundRecords(await open_pool(stack, postgres_uri), "records-test")
        await asyncio.gather(store.setup(), store.setup())  # racing start-ups both succeed
        yield store


def job(scope: str = "tenant-a") -> tuple[dict[str, object], BackgroundJob]:
    response_id = f"resp_{uuid.uuid4().hex}"
    queued = {"id": response_id, "object": "response", "status": "queued", "output": []}
    return queued, BackgroundJob(response_id, scope, "slow-background", {"input": "x"}, 0)


async def test_racing_claims_hand_the_job_to_exactly_one_worker(
    records: BackgroundRecords,
) -> None:
    queued, background = job()
    await records.create(queued, background, None, 60)
    claims = await asyncio.gather(
        *(records.claim(background.response_id, f"worker-{i}") for i in range(10))
    )
    assert [c for c in claims if c is not None] == [background]


async def test_racing_creates_with_one_key_make_one_record(records: BackgroundRecords) -> None:
    key = IdempotencyKey("tenant-a", uuid.uuid4().hex, "hash-1")
    attempts = [job() for _ in range(8)]
    results = await asyncio.gather(*(records.create(q, j, key, 60) for q, j in attempts))
    assert sum(created for _, created in results) == 1
    assert len({snapshot["id"] for snapshot, _ in results}) == 1
    with pytest.raises(IdempotencyKeyReusedError):
        await records.create(*job(), IdempotencyKey("tenant-a", key.key, "hash-2"), 60)
    # Keys are scoped: another tenant's identical key names its own Response.
    _, created = await records.create(*job(), IdempotencyKey("tenant-b", key.key, "h"), 60)
    assert created


async def test_an_expired_key_names_a_new_response(records: BackgroundRecords) -> None:
    key = IdempotencyKey("tenant-a", uuid.uuid4().hex, "hash-1")
    first, _ = await records.create(*job(), key, 0.01)
    await asyncio.sleep(0.05)
    second, created = await records.create(*job(), key, 60)
    assert created
    assert second["id"] != first["id"]


async def test_terminal_states_never_change(records: BackgroundRecords) -> None:
    queued, background = job()
    await records.create(queued, background, None, 60)
    assert await records.claim(background.response_id, "w1") is not None
    cancelled = await records.cancel(background.response_id, "tenant-a")
    assert cancelled is not None
    assert cancelled[0]["status"] == "cancelled"
    finished = {**queued, "status": "completed"}
    assert not await records.finish(background.response_id, "w1", finished)
    assert not await records.heartbeat(background.response_id, "w1", None)
    assert not await records.fail(background.response_id, "w1", "late")
    again = await records.cancel(background.response_id, "tenant-a")
    assert again == (cancelled[0], False)
    assert await records.retrieve(background.response_id, "tenant-b", 10) is None


async def test_a_silent_worker_is_failed_by_a_poll_and_by_a_sweep(
    records: BackgroundRecords,
) -> None:
    polled, swept = job(), job()
    for queued, background in (polled, swept):
        await records.create(queued, background, None, 60)
        await records.claim(background.response_id, "w-gone")
    await asyncio.sleep(0.3)
    snapshot = await records.retrieve(polled[1].response_id, "tenant-a", stale_after=0.1)
    assert snapshot is not None
    assert snapshot["status"] == "failed"
    assert snapshot["error"] == {"code": "server_error", "message": WORKER_LOST_MESSAGE}
    result = await records.sweep(stale_after=0.1, requeue_after=3600, retention=3600)
    assert swept[1].response_id in result.failed
    assert polled[1].response_id not in result.failed  # already failed, not failed twice


async def test_sweep_requeues_unclaimed_jobs_once_per_interval(
    records: BackgroundRecords,
) -> None:
    queued, background = job()
    await records.create(queued, background, None, 60)
    await asyncio.sleep(0.3)
    first = await records.sweep(stale_after=60, requeue_after=0.2, retention=3600)
    second = await records.sweep(stale_after=60, requeue_after=0.2, retention=3600)
    assert background.response_id in first.requeue
    assert background.response_id not in second.requeue  # dispatched again just now


async def test_a_failed_dispatch_leaves_the_response_queued_for_the_requeue_sweep(
    postgres_uri: str,
) -> None:
    """Redis refusing the message at create time loses nothing: the client gets its queued
    Response and the sweep dispatches it again."""
    settings = LGOSSettings(
        postgres_uri=postgres_uri, redis_url=REDIS_URL, background_queue="dispatch-test"
    )
    backend = await DistributedBackend.open(settings)
    try:
        working = backend.broker
        backend.broker = make_broker(f"redis://127.0.0.1:{free_port()}/0", "dispatch-test")
        queued, background = job()
        snapshot = await backend.submit(queued, background, None)
        assert snapshot["status"] == "queued"
        seen = await backend.retrieve(background.response_id, background.scope)
        assert seen is not None and seen["status"] == "queued"
        backend.broker = working
        await asyncio.sleep(0.3)
        swept = await backend.records.sweep(stale_after=60, requeue_after=0.2, retention=3600)
        assert swept.requeue == [background.response_id]
    finally:
        await backend.close()


async def test_a_worker_retries_recording_a_finished_job(
    postgres_uri: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed write of the final snapshot (a PostgreSQL restart, a dropped pooled connection)
    is retried, so a finished job is not failed later as if its worker had died."""
    settings = LGOSSettings(
        postgres_uri=postgres_uri,
        redis_url=REDIS_URL,
        background_queue=f"finish-retry-{uuid.uuid4().hex[:8]}",
        worker_heartbeat=0.2,
        worker_stale_after=2.0,
    )
    real_finish = BackgroundRecords.finish
    attempts = 0

    async def flaky_finish(self: BackgroundRecords, *args: Any) -> bool:
        nonlocal attempts
        attempts += 1
        if attempts == 1:
            raise psycopg.OperationalError("server closed the connection unexpectedly")
        return await real_finish(self, *args)

    monkeypatch.setattr(BackgroundRecords, "finish", flaky_finish)

    async def execute(job: BackgroundJob, publish: Any) -> dict[str, Any]:
        return {"id": job.response_id, "object": "response", "status": "completed", "output": []}

    worker = Worker(settings, execute)
    running = asyncio.create_task(worker.run())
    backend = await DistributedBackend.open(settings)
    try:
        queued, background = job()
        await backend.submit(queued, background, None)
        for _ in range(100):
            seen = await backend.retrieve(background.response_id, background.scope)
            if seen is not None and seen["status"] not in {"queued", "in_progress"}:
                break
            await asyncio.sleep(0.05)
        assert seen is not None and seen["status"] == "completed"
        assert attempts == 2
    finally:
        await backend.close()
        worker.stopping.set()
        await running
