"""The distributed engine's PostgreSQL records, raced on a real server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import pytest
from lgos.background.backend import BackgroundJob, IdempotencyKey, IdempotencyKeyReusedError
from lgos.background.records import WORKER_LOST_MESSAGE, BackgroundRecords
from lgos.interrupts.persistence import open_pool

pytestmark = pytest.mark.asyncio


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
