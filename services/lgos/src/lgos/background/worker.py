"""``lgos worker``: runs background jobs from the Redis stream, records them in PostgreSQL.

Per job: claim the queued row (only one delivery ever wins), run it, heartbeat every
``worker_heartbeat`` seconds together with the latest partial snapshot, record the terminal
snapshot unless the Response already ended. A cancel arrives on the Redis channel; the heartbeat
is the safety net (it stops a job whose row is no longer ``in_progress`` for this worker).

Every worker also sweeps: in-progress rows whose heartbeat is older than ``worker_stale_after``
belong to a dead worker and fail; queued rows nobody claimed for ``background_requeue_after``
are dispatched again; queue consumers idle for ``worker_consumer_idle`` with nothing pending (dead
workers' names) leave the Redis group.

On SIGTERM/SIGINT the worker stops taking jobs, lets in-flight ones run for up to
``worker_shutdown_grace`` seconds, then fails and cancels what is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import socket
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Any
from uuid import uuid4

import orjson
from psycopg_pool import AsyncConnectionPool
from redis.asyncio import Redis
from service_kit import metrics
from taskiq.acks import AcknowledgeType
from taskiq.receiver import Receiver
from taskiq_redis import RedisStreamBroker

from lgos.background.backend import BackgroundJob, JobExecutor, Snapshot
from lgos.background.queue import (
    RUN_TASK,
    cancel_channel,
    dispatch,
    make_broker,
    prune_consumers,
)
from lgos.background.records import BackgroundRecords
from lgos.errors import INTERNAL_ERROR_MESSAGE, error_envelope
from lgos.redis_client import connect_redis
from lgos.settings import LGOSSettings
from lgos.storage import PostgresLimits, migrated, open_pool

logger = logging.getLogger("lgos.worker")

SHUTDOWN_MESSAGE = "The worker shut down before this response finished."


# The worker's metrics, each a no-op while metrics are switched off (LGOS_METRICS_ENABLED).
def _worker_up(name: str, value: int) -> None:
    if metrics.enabled():
        metrics.WORKER_UP.labels(name).set(value)


def _running_jobs(change: int) -> None:
    if metrics.enabled():
        metrics.WORKER_RUNNING.inc(change)


def _job_ended(outcome: str) -> None:
    if metrics.enabled():
        metrics.WORKER_JOBS.labels(outcome).inc()


@dataclass
class _Progress:
    """The latest snapshot a job published, and whether the database has seen it yet."""

    latest: Snapshot | None = None
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def publish(self, snapshot: Snapshot) -> None:
        self.latest = snapshot
        self.changed.set()

    def take(self) -> Snapshot | None:
        if not self.changed.is_set():
            return None
        self.changed.clear()
        return self.latest


class Worker:
    def __init__(self, settings: LGOSSettings, execute: JobExecutor) -> None:
        assert settings.postgres_uri
        assert settings.redis_url
        self.settings = settings
        self.execute = execute
        self.name = f"{socket.gethostname()}:{os.getpid()}:{uuid4().hex[:6]}"
        self.stopping = asyncio.Event()
        self._jobs: dict[str, asyncio.Task[Snapshot]] = {}
        self._handlers: set[asyncio.Task[Any]] = set()
        self._records: BackgroundRecords | None = None
        self._broker: RedisStreamBroker | None = None

    @property
    def records(self) -> BackgroundRecords:
        assert self._records is not None, "the worker is not running"
        return self._records

    @property
    def broker(self) -> RedisStreamBroker:
        assert self._broker is not None, "the worker is not running"
        return self._broker

    @property
    def running(self) -> int:
        return len(self._jobs)

    async def run(self, health_port: int | None = None) -> None:
        settings = self.settings
        assert settings.postgres_uri
        assert settings.redis_url
        async with AsyncExitStack() as stack:
            pool: AsyncConnectionPool[Any] = await open_pool(
                stack, settings.postgres_uri, PostgresLimits.from_settings(settings)
            )
            self._records = BackgroundRecords(pool, settings.background_queue)
            await migrated(pool, self._records.setup)
            self._broker = make_broker(
                settings.redis_url,
                settings.background_queue,
                consumer=self.name,
                timeout=settings.redis_timeout,
                on_reconnect=self._queue_back,
            )

            async def run_background(response_id: str) -> None:
                await self._handle(response_id)  # taskiq registers functions, not methods

            self._broker.register_task(run_background, task_name=RUN_TASK)
            await self._broker.startup()
            stack.push_async_callback(self._broker.shutdown)
            redis: Redis = connect_redis(settings.redis_url, settings.redis_timeout)
            stack.push_async_callback(redis.aclose)
            helpers = [
                asyncio.create_task(self._listen_for_cancels(redis)),
                asyncio.create_task(self._sweep_forever(redis)),
            ]
            if health_port is not None:
                server = await asyncio.start_server(
                    self._health, settings.host, health_port, reuse_address=True
                )
                stack.push_async_callback(server.wait_closed)
                stack.callback(server.close)
            receiver = Receiver(
                self._broker,
                run_startup=False,
                max_async_tasks=settings.worker_concurrency,
                ack_type=AcknowledgeType.WHEN_EXECUTED,
                wait_tasks_timeout=settings.worker_shutdown_grace,
            )
            logger.info(
                "worker started",
                extra={"worker": self.name, "concurrency": settings.worker_concurrency},
            )
            _worker_up(self.name, 1)
            try:
                await receiver.listen(self.stopping)
            finally:
                _worker_up(self.name, 0)
                await self._fail_leftovers()
                for helper in helpers:
                    helper.cancel()
                await asyncio.gather(*helpers, return_exceptions=True)
            logger.info("worker stopped", extra={"worker": self.name})

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self._request_stop, sig)

    def _request_stop(self, sig: signal.Signals) -> None:
        if not self.stopping.is_set():
            logger.info(
                "stopping: no new jobs",
                extra={
                    "signal": sig.name,
                    "running": self.running,
                    "grace_seconds": self.settings.worker_shutdown_grace,
                },
            )
            self.stopping.set()
            _worker_up(self.name, 0)

    async def _fail_leftovers(self) -> None:
        """After the grace period: what still runs fails now, rather than when a sweep notices."""
        for response_id, task in list(self._jobs.items()):
            with contextlib.suppress(Exception):
                await self.records.fail(response_id, self.name, SHUTDOWN_MESSAGE)
            task.cancel()
        # Let handlers unwind so their messages are acknowledged before the broker closes.
        if self._handlers:
            await asyncio.wait(self._handlers, timeout=5.0)

    async def _handle(self, response_id: str) -> None:
        """The taskiq task: one delivery of one Response id."""
        current = asyncio.current_task()
        assert current is not None
        self._handlers.add(current)
        try:
            if self.stopping.is_set():
                return  # read during shutdown: leave it queued for another worker's requeue
            job = await self.records.claim(response_id, self.name)
            if job is None:
                return  # cancelled while queued, or a redelivery of a job already taken
            await self._run(job)
        finally:
            self._handlers.discard(current)

    async def _run(self, job: BackgroundJob) -> None:
        response_id = job.response_id
        progress = _Progress()
        task = asyncio.create_task(self.execute(job, progress.publish))
        self._jobs[response_id] = task
        pump = asyncio.create_task(self._pump(response_id, task, progress))
        # Wake the pump when the job ends, so it stops between writes rather than inside one.
        task.add_done_callback(lambda _: progress.changed.set())
        logger.info("job started", extra={"response_id": response_id, "worker": self.name})
        _running_jobs(1)
        try:
            final = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise
            # Stopped by a cancel, a sweep or shutdown (the row already says so and the write
            # below changes nothing), or a CancelledError the job raised itself: a failure.
            logger.info("job stopped", extra={"response_id": response_id})
            _job_ended("stopped")
            await self._record_end(response_id, lambda: self._fail(response_id, progress.latest))
            return
        except Exception:
            logger.exception("background job failed", extra={"response_id": response_id})
            _job_ended("failed")
            await self._record_end(response_id, lambda: self._fail(response_id, progress.latest))
            return
        finally:
            _running_jobs(-1)
            self._jobs.pop(response_id, None)
            task.cancel()  # a no-op unless this handler itself is being cancelled
            await asyncio.gather(pump, return_exceptions=True)
        recorded = await self._record_end(
            response_id, lambda: self.records.finish(response_id, self.name, final)
        )
        _job_ended("finished")
        logger.info(
            "job finished",
            extra={"response_id": response_id, "status": final["status"], "recorded": recorded},
        )

    def _fail(self, response_id: str, partial: Snapshot | None) -> Awaitable[bool]:
        return self.records.fail(response_id, self.name, INTERNAL_ERROR_MESSAGE, partial)

    async def _record_end(self, response_id: str, write: Callable[[], Awaitable[bool]]) -> bool:
        """Record how a job ended, retrying a failed write (a PostgreSQL restart, a dropped pooled
        connection) for up to half the stale bound, so a finished job is not lost to a sweep."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.worker_stale_after / 2
        delay = 0.1
        while True:
            try:
                return await write()
            except Exception:
                if loop.time() + delay > deadline:
                    logger.exception("could not record the end", extra={"response_id": response_id})
                    return False
                logger.warning("recording the end failed; retrying", exc_info=True)
                await asyncio.sleep(delay)
                delay *= 2

    async def _pump(
        self, response_id: str, task: asyncio.Task[Snapshot], progress: _Progress
    ) -> None:
        """Heartbeat, carrying new partial snapshots as soon as they are published."""
        while not task.done():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(
                    progress.changed.wait(), timeout=self.settings.worker_heartbeat
                )
            if task.done():
                return  # the final snapshot supersedes any partial one
            partial = progress.take()
            try:
                ours = await self.records.heartbeat(response_id, self.name, partial)
            except Exception:
                logger.warning("heartbeat failed", extra={"response_id": response_id})
                if partial is not None:
                    progress.changed.set()  # the next heartbeat carries the latest one again
                await asyncio.sleep(min(1.0, self.settings.worker_heartbeat))
                continue
            if not ours:
                task.cancel()
                return

    async def _listen_for_cancels(self, redis: Redis) -> None:
        channel = cancel_channel(self.settings.background_queue)
        while True:
            try:
                async with redis.pubsub() as pubsub:
                    await pubsub.subscribe(channel)
                    async for message in pubsub.listen():
                        if message.get("type") != "message":
                            continue
                        task = self._jobs.get(message["data"].decode())
                        if task is not None:
                            task.cancel()
            except asyncio.CancelledError:
                raise
            except Exception:
                # The heartbeat still stops cancelled jobs; resubscribe shortly.
                logger.warning("cancel channel lost; resubscribing", exc_info=True)
                await asyncio.sleep(1.0)

    async def _sweep_forever(self, redis: Redis) -> None:
        settings = self.settings
        loop = asyncio.get_running_loop()
        # Pruning lists every consumer of the group: once a minute is plenty.
        prune_every, pruned_at = min(60.0, settings.worker_consumer_idle), loop.time()
        while True:
            await asyncio.sleep(settings.background_sweep_interval)
            if loop.time() - pruned_at >= prune_every:
                pruned_at = loop.time()
                try:
                    gone = await prune_consumers(
                        redis, settings.background_queue, settings.worker_consumer_idle
                    )
                    if gone:
                        logger.info("idle queue consumers removed", extra={"consumers": gone})
                except Exception:
                    logger.warning("consumer pruning failed", exc_info=True)
            try:
                result = await self.records.sweep(
                    stale_after=settings.worker_stale_after,
                    requeue_after=settings.background_requeue_after,
                    retention=settings.background_retention,
                )
                for response_id in result.failed:
                    logger.warning(
                        "worker lost; response failed", extra={"response_id": response_id}
                    )
                await self._dispatch_again(result.requeue)
            except Exception:
                logger.warning("background sweep failed", exc_info=True)

    async def _dispatch_again(self, response_ids: list[str]) -> None:
        for done, response_id in enumerate(response_ids):
            try:
                await dispatch(self.broker, response_id)
            except Exception:
                # Redis is away: the rest stay due, for the next sweep rather than a timeout.
                await self.records.undispatched(response_ids[done:])
                raise

    async def _queue_back(self) -> None:
        """Redis answers again after an outage, perhaps empty: what is queued may have lost its
        message, so every queued job is due for dispatch on the next sweep (duplicates are
        harmless: only one claim wins)."""
        try:
            due = await self.records.undispatched()
        except Exception:
            logger.warning("could not requeue after the queue came back", exc_info=True)
            return
        logger.info("queue back; queued jobs due again", extra={"queued": due})

    async def _health(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A minimal ``GET /health`` so supervisors and tests can wait for a ready worker, and
        ``GET /metrics`` (404 while metrics are switched off; any other request is answered as
        ``/health``)."""
        with contextlib.suppress(Exception):
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5.0)
            if head.split(b" ", 2)[:2] == [b"GET", b"/metrics"]:
                if metrics.enabled():
                    text = await metrics.exposition()
                    _answer(writer, b"200 OK", metrics.CONTENT_TYPE.encode(), text)
                else:
                    missing = error_envelope("Not Found", code="not_found")
                    _answer(writer, b"404 Not Found", b"application/json", orjson.dumps(missing))
            else:
                stopping = self.stopping.is_set()
                body = orjson.dumps(
                    {
                        "status": "stopping" if stopping else "ok",
                        "worker": self.name,
                        "running": self.running,
                    }
                )
                status = b"503 Service Unavailable" if stopping else b"200 OK"
                _answer(writer, status, b"application/json", body)
            await writer.drain()
        writer.close()


def _answer(writer: asyncio.StreamWriter, status: bytes, content_type: bytes, body: bytes) -> None:
    writer.write(
        b"HTTP/1.1 "
        + status
        + b"\r\nContent-Type: "
        + content_type
        + b"\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\nConnection: close\r\n\r\n"
        + body
    )
