"""Dispatch on Redis through taskiq: one stream of job messages, one cancel channel.

A message carries only a Response id; the job itself is read from PostgreSQL by the worker
that claims it, so a duplicated or replayed message can never run a job twice.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncGenerator, Awaitable, Callable
from typing import Any

from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError
from taskiq.acks import AckableMessage
from taskiq.kicker import AsyncKicker
from taskiq_redis import RedisStreamBroker

from lgos.redis_client import redis_options

logger = logging.getLogger("lgos.background")

RUN_TASK = "lgos.background.run"
CONSUMER_GROUP = "lgos-workers"
STREAM_MAXLEN = 10_000
"""Messages kept in the stream (approximately): acknowledged ones are never removed otherwise.
A queued job whose message was trimmed unread is dispatched again by the requeue sweep."""
RETRY_FIRST, RETRY_MAX = 0.5, 2.0


class ResilientStreamBroker(RedisStreamBroker):
    """taskiq-redis's stream broker, except that losing Redis pauses reading instead of ending it.

    taskiq's Receiver stops listening on any error from the broker, which would stop the worker
    and fail every job it runs, although running jobs need only PostgreSQL.
    """

    on_reconnect: Callable[[], Awaitable[None]] | None = None
    """Called once Redis answers again after an outage (it may have come back empty)."""

    async def listen(self) -> AsyncGenerator[AckableMessage, None]:
        delay = RETRY_FIRST
        while True:
            try:
                async for message in super().listen():
                    delay = RETRY_FIRST
                    yield message
            except (RedisConnectionError, RedisTimeoutError, ResponseError) as error:
                # NOGROUP: Redis came back empty (no persistence); the group is declared again.
                if isinstance(error, ResponseError) and not str(error).startswith("NOGROUP"):
                    raise
                logger.warning(
                    "queue unreachable; retrying", extra={"retry_in": delay, "error": str(error)}
                )
                await asyncio.sleep(delay)
                delay = min(delay * 2, RETRY_MAX)
                try:
                    await self._declare_consumer_group()
                except RedisError:
                    continue
                if self.on_reconnect is not None:
                    await self.on_reconnect()


def make_broker(
    redis_url: str,
    queue: str,
    consumer: str | None = None,
    timeout: float = 5.0,
    on_reconnect: Callable[[], Awaitable[None]] | None = None,
) -> RedisStreamBroker:
    broker = ResilientStreamBroker(
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
        maxlen=STREAM_MAXLEN,
        **redis_options(timeout),
    )
    broker.on_reconnect = on_reconnect
    return broker


def cancel_channel(queue: str) -> str:
    return f"{queue}:cancel"


async def dispatch(broker: RedisStreamBroker, response_id: str) -> None:
    kicker: AsyncKicker[Any, Any] = AsyncKicker(task_name=RUN_TASK, broker=broker, labels={})
    await kicker.kiq(response_id)


async def prune_consumers(redis: Redis, queue: str, idle_after: float) -> list[str]:
    """Remove the workers' group members idle for ``idle_after`` seconds with nothing pending.

    Every worker process joins as a new consumer, so those of dead (or stopped) workers would
    stay in the group forever. One with nothing pending holds nothing to lose; a live worker's
    next read joins it again.
    """
    try:
        consumers = await redis.xinfo_consumers(queue, CONSUMER_GROUP)
    except ResponseError:
        return []  # no stream or no group yet: nothing to prune
    removed = []
    for consumer in consumers:
        name = consumer["name"]
        name = name.decode() if isinstance(name, bytes) else str(name)
        if consumer["pending"] == 0 and consumer["idle"] > idle_after * 1000:
            await redis.xgroup_delconsumer(queue, CONSUMER_GROUP, name)
            removed.append(name)
    return removed
