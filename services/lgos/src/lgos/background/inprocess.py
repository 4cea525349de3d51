"""The embedded background backend: records and jobs in this process (``lgos serve`` alone).

Nothing survives a restart; the distributed backend (Redis dispatch, PostgreSQL records) is for
deployments that need that.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import logging
import time
from dataclasses import dataclass

from lgos.background.backend import (
    TERMINAL,
    BackgroundJob,
    IdempotencyKey,
    IdempotencyKeyReusedError,
    JobExecutor,
    Snapshot,
    failed_snapshot,
)

logger = logging.getLogger("lgos.background")


PRUNE_INTERVAL = 60.0
"""Seconds between passes that drop ended Responses past retention and expired keys."""


@dataclass
class _Record:
    scope: str
    snapshot: Snapshot
    task: asyncio.Task[None] | None = None
    ended_at: float | None = None
    """``time.monotonic()`` when the Response reached a terminal state."""

    @property
    def terminal(self) -> bool:
        return self.snapshot["status"] in TERMINAL

    def end(self, snapshot: Snapshot) -> None:
        self.snapshot = snapshot
        self.ended_at = time.monotonic()


class InProcessBackend:
    def __init__(
        self,
        executor: JobExecutor,
        idempotency_ttl: float = 24 * 3600.0,
        retention: float = 7 * 24 * 3600.0,
    ) -> None:
        self._execute = executor
        self._records: dict[str, _Record] = {}
        self._keys: dict[tuple[str, str], tuple[str, str, float]] = {}
        self._lock = asyncio.Lock()
        self.idempotency_ttl = idempotency_ttl
        self.retention = retention
        self._pruned_at = time.monotonic()

    def _prune(self) -> None:
        """Forget ended Responses past retention and expired keys, as the PostgreSQL sweep does;
        a long-running ``lgos serve`` would otherwise keep every snapshot it ever made."""
        now = time.monotonic()
        if now - self._pruned_at < PRUNE_INTERVAL:
            return
        self._pruned_at = now
        self._keys = {k: v for k, v in self._keys.items() if v[2] > now}
        self._records = {
            response_id: record
            for response_id, record in self._records.items()
            if record.ended_at is None or now - record.ended_at < self.retention
        }

    async def submit(
        self, queued: Snapshot, job: BackgroundJob, idempotency: IdempotencyKey | None
    ) -> Snapshot:
        async with self._lock:
            self._prune()
            if idempotency is not None:
                existing = self._keys.get((idempotency.scope, idempotency.key))
                # A key can outlive its Response (retention shorter than the key TTL): it then
                # names nothing, as an expired key, and the request starts a new run.
                if (
                    existing is not None
                    and existing[2] > time.monotonic()
                    and existing[0] in self._records
                ):
                    response_id, request_hash, _ = existing
                    if request_hash != idempotency.request_hash:
                        raise IdempotencyKeyReusedError(idempotency.key)
                    return copy.deepcopy(self._records[response_id].snapshot)
                self._keys[(idempotency.scope, idempotency.key)] = (
                    queued["id"],
                    idempotency.request_hash,
                    time.monotonic() + self.idempotency_ttl,
                )
            record = _Record(job.scope, queued)
            self._records[queued["id"]] = record
            record.task = asyncio.create_task(self._run(record, job))
            return copy.deepcopy(queued)

    async def _run(self, record: _Record, job: BackgroundJob) -> None:
        def publish(snapshot: Snapshot) -> None:
            if not record.terminal:
                record.snapshot = snapshot

        try:
            final = await self._execute(job, publish)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # cancel() recorded the terminal state, or the backend is closing
            # A CancelledError nobody asked for (the graph awaited a cancelled task): a failure.
            logger.warning(
                "background job cancelled itself", extra={"response_id": job.response_id}
            )
            final = failed_snapshot(record.snapshot)
        except Exception:
            logger.exception("background job failed", extra={"response_id": job.response_id})
            final = failed_snapshot(record.snapshot)
        if not record.terminal:
            record.end(final)

    async def retrieve(self, response_id: str, scope: str) -> Snapshot | None:
        record = self._records.get(response_id)
        if record is None or record.scope != scope:
            return None
        return copy.deepcopy(record.snapshot)

    async def cancel(self, response_id: str, scope: str) -> Snapshot | None:
        record = self._records.get(response_id)
        if record is None or record.scope != scope:
            return None
        if not record.terminal:
            # Terminal first: whatever the job does while it unwinds cannot change it again.
            record.end({**record.snapshot, "status": "cancelled"})
            if record.task is not None:
                record.task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await record.task
        return copy.deepcopy(record.snapshot)

    async def close(self) -> None:
        tasks = [r.task for r in self._records.values() if r.task is not None and not r.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
