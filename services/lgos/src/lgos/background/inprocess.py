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
from dataclasses import dataclass, field

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


@dataclass
class _Record:
    scope: str
    snapshot: Snapshot
    task: asyncio.Task[None] | None = None
    expires_at: float = field(default=0.0)

    @property
    def terminal(self) -> bool:
        return self.snapshot["status"] in TERMINAL


class InProcessBackend:
    def __init__(self, executor: JobExecutor, idempotency_ttl: float = 24 * 3600.0) -> None:
        self._execute = executor
        self._records: dict[str, _Record] = {}
        self._keys: dict[tuple[str, str], tuple[str, str, float]] = {}
        self._lock = asyncio.Lock()
        self.idempotency_ttl = idempotency_ttl

    async def submit(
        self, queued: Snapshot, job: BackgroundJob, idempotency: IdempotencyKey | None
    ) -> Snapshot:
        async with self._lock:
            if idempotency is not None:
                existing = self._keys.get((idempotency.scope, idempotency.key))
                if existing is not None and existing[2] > time.monotonic():
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
            return  # cancel() already recorded the terminal state
        except Exception:
            logger.exception("background job failed", extra={"response_id": record.snapshot["id"]})
            final = failed_snapshot(record.snapshot)
        publish(final)

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
            record.snapshot = {**record.snapshot, "status": "cancelled"}
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
