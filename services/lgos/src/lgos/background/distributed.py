"""The distributed background engine, as the API process sees it.

Records live in PostgreSQL (``BackgroundRecords``); jobs are dispatched on a Redis stream and
run by ``lgos worker`` processes; a cancel is recorded first, then announced on Redis so the
worker running the job stops it at once (its next heartbeat would notice anyway).
"""

from __future__ import annotations

import contextlib
import logging
from contextlib import AsyncExitStack
from typing import Any

from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis
from taskiq_redis import RedisStreamBroker

from lgos.background.backend import BackgroundJob, IdempotencyKey, Snapshot
from lgos.background.queue import cancel_channel, dispatch, make_broker
from lgos.background.records import BackgroundRecords
from lgos.redis_client import connect_redis
from lgos.settings import LGOSSettings
from lgos.storage import PostgresLimits, migrated, open_pool

logger = logging.getLogger("lgos.background")


class DistributedBackend:
    def __init__(
        self,
        settings: LGOSSettings,
        records: BackgroundRecords,
        broker: RedisStreamBroker,
        redis: Redis,
        stack: AsyncExitStack,
    ) -> None:
        self.settings = settings
        self.records = records
        self.broker = broker
        self.redis = redis
        self._stack = stack

    @classmethod
    async def open(cls, settings: LGOSSettings) -> DistributedBackend:
        assert settings.postgres_uri
        assert settings.redis_url
        stack = AsyncExitStack()
        try:
            pool: AsyncConnectionPool[Any] = await open_pool(
                stack, settings.postgres_uri, PostgresLimits.from_settings(settings)
            )
            records = BackgroundRecords(pool, settings.background_queue)
            await migrated(pool, records.setup)
            broker = make_broker(
                settings.redis_url, settings.background_queue, timeout=settings.redis_timeout
            )
            await broker.startup()  # declares the consumer group, so nothing queued is missed
            stack.push_async_callback(broker.shutdown)
            redis: Redis = connect_redis(settings.redis_url, settings.redis_timeout)
            stack.push_async_callback(redis.aclose)
        except BaseException:
            await stack.aclose()
            raise
        return cls(settings, records, broker, redis, stack)

    async def submit(
        self, queued: Snapshot, job: BackgroundJob, idempotency: IdempotencyKey | None
    ) -> Snapshot:
        snapshot, created = await self.records.create(
            queued, job, idempotency, self.settings.idempotency_ttl
        )
        if created:
            try:
                await dispatch(self.broker, job.response_id)
            except Exception:
                # The row is durable and queued: marked undispatched, the workers' next sweep
                # dispatches it as soon as Redis answers again (and a message that did reach
                # Redis despite the error is claimed only once), so the client still gets its
                # queued Response. Should even the mark fail, the requeue timeout still applies.
                logger.warning(
                    "dispatch failed; left for the workers' sweep",
                    extra={"response_id": job.response_id},
                    exc_info=True,
                )
                with contextlib.suppress(Exception):
                    await self.records.undispatched([job.response_id])
        return snapshot

    async def retrieve(self, response_id: str, scope: str) -> Snapshot | None:
        return await self.records.retrieve(response_id, scope, self.settings.worker_stale_after)

    async def cancel(self, response_id: str, scope: str) -> Snapshot | None:
        result = await self.records.cancel(response_id, scope)
        if result is None:
            return None
        snapshot, changed = result
        if changed:
            try:
                await self.redis.publish(
                    cancel_channel(self.settings.background_queue), response_id
                )
            except Exception:
                # Recorded already; the worker's next heartbeat stops the job.
                logger.warning("cancel signal not sent", extra={"response_id": response_id})
        return snapshot

    async def close(self) -> None:
        await self._stack.aclose()
