"""Dispatch on Redis through taskiq: one stream of job messages, one cancel channel.

A message carries only a Response id; the job itself is read from PostgreSQL by the worker
that claims it, so a duplicated or replayed message can never run a job twice.
"""

from __future__ import annotations

from typing import Any

from taskiq.kicker import AsyncKicker
from taskiq_redis import RedisStreamBroker

RUN_TASK = "lgos.background.run"
CONSUMER_GROUP = "lgos-workers"


def make_broker(redis_url: str, queue: str, consumer: str | None = None) -> RedisStreamBroker:
    return RedisStreamBroker(
        redis_url,
        queue_name=queue,
        consumer_group_name=CONSUMER_GROUP,
        consumer_name=consumer,
        # "0": a group created after jobs were queued still delivers them.
        consumer_id="0",
        # Fetch one message at a time: whatever a worker has read but not started is stranded
        # until another worker reclaims it, should this one die.
        xread_count=1,
        xread_block=1000,
        # Unacknowledged messages of a dead consumer are reclaimed after this (ms); claims in
        # PostgreSQL make the redelivery harmless.
        idle_timeout=30_000,
        unacknowledged_lock_timeout=5.0,
    )


def cancel_channel(queue: str) -> str:
    return f"{queue}:cancel"


async def dispatch(broker: RedisStreamBroker, response_id: str) -> None:
    kicker: AsyncKicker[Any, Any] = AsyncKicker(task_name=RUN_TASK, broker=broker, labels={})
    await kicker.kiq(response_id)
