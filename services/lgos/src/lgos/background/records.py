"""Durable background records in PostgreSQL: Responses, their jobs and idempotency keys.

Every state change is one conditional ``UPDATE``, so racing processes agree without locks held
across awaits: a claim only takes a ``queued`` row, a heartbeat or a finish only touches an
``in_progress`` row its worker claimed, and a cancel only ends a non-terminal one. Terminal rows
never change again.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import orjson
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from lgos.background.backend import (
    BackgroundJob,
    IdempotencyKey,
    IdempotencyKeyReusedError,
    Snapshot,
)

# An escaped NUL (preceded by an even number of backslashes, so not a literal "\u0000").
_ESCAPED_NUL = re.compile(rb"(?<!\\)((?:\\\\)*)\\u0000")


def storable_json(value: Any) -> bytes:
    """JSON that jsonb accepts: jsonb holds no U+0000, so a graph's output that contains one
    is kept with U+FFFD in its place instead of failing the finished Response."""
    return _ESCAPED_NUL.sub(rb"\1\\ufffd", orjson.dumps(value))


def jsonb(value: Any) -> Jsonb:
    return Jsonb(value, dumps=storable_json)


WORKER_LOST_MESSAGE = "The worker running this response stopped before it finished."

_SCHEMA = """
CREATE TABLE IF NOT EXISTS lgos_background_responses (
    id text PRIMARY KEY,
    scope text NOT NULL,
    status text NOT NULL,
    snapshot jsonb NOT NULL,
    job jsonb NOT NULL,
    queue text NOT NULL,
    worker text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    dispatched_at timestamptz NOT NULL DEFAULT now(),
    started_at timestamptz,
    heartbeat_at timestamptz
);
CREATE INDEX IF NOT EXISTS lgos_background_responses_active
    ON lgos_background_responses (status, heartbeat_at)
    WHERE status IN ('queued', 'in_progress');
-- The sweeps' retention deletes, so they need not scan every kept row each interval.
CREATE INDEX IF NOT EXISTS lgos_background_responses_ended
    ON lgos_background_responses (updated_at)
    WHERE status IN ('completed', 'incomplete', 'failed', 'cancelled');
CREATE TABLE IF NOT EXISTS lgos_background_idempotency_keys (
    scope text NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    response_id text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX IF NOT EXISTS lgos_background_idempotency_keys_expiry
    ON lgos_background_idempotency_keys (expires_at);
"""
# Concurrent CREATE ... IF NOT EXISTS can still collide in the catalog; serialise start-ups.
_SCHEMA_LOCK = 0x6C676F73_6267  # "lgosbg"

# The failed object is built in SQL so a sweep needs no round trip per row.
_FAIL = """
    status = 'failed',
    updated_at = now(),
    snapshot = COALESCE(%(snapshot)s::jsonb, snapshot) || jsonb_build_object(
        'status', 'failed',
        'completed_at', extract(epoch FROM now())::bigint,
        'error', jsonb_build_object('code', 'server_error', 'message', %(message)s::text)
    )
"""


def _fail_params(message: str, snapshot: Snapshot | None = None, **params: Any) -> dict[str, Any]:
    return {"message": message, "snapshot": jsonb(snapshot) if snapshot else None, **params}


@dataclass(frozen=True, slots=True)
class SweepResult:
    failed: list[str]
    """In-progress Responses whose worker stopped heartbeating."""
    requeue: list[str]
    """Queued Responses nobody claimed in time: dispatch them again (claims are idempotent)."""


class BackgroundRecords:
    """The PostgreSQL side of the distributed engine, shared by API processes and workers.

    ``queue`` names the dispatch stream: records remember it so a requeue goes back to it.
    """

    def __init__(self, pool: AsyncConnectionPool[Any], queue: str) -> None:
        self.pool = pool
        self.queue = queue

    async def setup(self) -> None:
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    await conn.execute(statement)

    async def create(
        self,
        queued: Snapshot,
        job: BackgroundJob,
        idempotency: IdempotencyKey | None,
        idempotency_ttl: float,
    ) -> tuple[Snapshot, bool]:
        """Insert the queued Response, or return the one the key already names.

        Returns ``(snapshot, created)``. Racing creates with one key serialise on the key's row:
        the loser's ``INSERT`` waits for the winner's commit, then reads the winner's Response.
        """
        async with self.pool.connection() as conn, conn.transaction():
            if idempotency is not None:
                cursor = await conn.execute(
                    """
                    INSERT INTO lgos_background_idempotency_keys AS k
                        (scope, key, request_hash, response_id, expires_at)
                    VALUES (%s, %s, %s, %s, now() + make_interval(secs => %s))
                    ON CONFLICT (scope, key) DO UPDATE SET
                        request_hash = EXCLUDED.request_hash,
                        response_id = EXCLUDED.response_id,
                        expires_at = EXCLUDED.expires_at
                    WHERE k.expires_at < now()
                    RETURNING response_id
                    """,
                    (
                        idempotency.scope,
                        idempotency.key,
                        idempotency.request_hash,
                        job.response_id,
                        idempotency_ttl,
                    ),
                )
                if await cursor.fetchone() is None:
                    cursor = await conn.execute(
                        """
                        SELECT k.request_hash, r.snapshot
                        FROM lgos_background_idempotency_keys k
                        JOIN lgos_background_responses r ON r.id = k.response_id
                        WHERE k.scope = %s AND k.key = %s
                        """,
                        (idempotency.scope, idempotency.key),
                    )
                    row = await cursor.fetchone()
                    if row is not None:
                        if row["request_hash"] != idempotency.request_hash:
                            raise IdempotencyKeyReusedError(idempotency.key)
                        existing: Snapshot = row["snapshot"]
                        return existing, False
                    # The key outlived its Response (retention): it names nothing any more.
                    await conn.execute(
                        """
                        UPDATE lgos_background_idempotency_keys
                        SET request_hash = %s, response_id = %s,
                            expires_at = now() + make_interval(secs => %s)
                        WHERE scope = %s AND key = %s
                        """,
                        (
                            idempotency.request_hash,
                            job.response_id,
                            idempotency_ttl,
                            idempotency.scope,
                            idempotency.key,
                        ),
                    )
            await conn.execute(
                """
                INSERT INTO lgos_background_responses (id, scope, status, snapshot, job, queue)
                VALUES (%s, %s, 'queued', %s, %s, %s)
                """,
                (job.response_id, job.scope, jsonb(queued), jsonb(job.to_json()), self.queue),
            )
        return queued, True

    async def retrieve(self, response_id: str, scope: str, stale_after: float) -> Snapshot | None:
        async with self.pool.connection() as conn:
            # A poll must not show a dead worker's run as running forever, even when no worker
            # is left to sweep it. One round trip: the CTE's UPDATE returns the failed row when
            # the run was stale, the plain SELECT (which sees the row as it was) otherwise.
            cursor = await conn.execute(
                f"""
                WITH failed AS (
                    UPDATE lgos_background_responses SET {_FAIL}
                    WHERE id = %(id)s AND scope = %(scope)s AND status = 'in_progress'
                        AND heartbeat_at < now() - make_interval(secs => %(stale)s)
                    RETURNING snapshot
                )
                SELECT snapshot FROM failed
                UNION ALL
                SELECT snapshot FROM lgos_background_responses
                WHERE id = %(id)s AND scope = %(scope)s AND NOT EXISTS (SELECT FROM failed)
                """,
                _fail_params(WORKER_LOST_MESSAGE, id=response_id, scope=scope, stale=stale_after),
            )
            row = await cursor.fetchone()
        return None if row is None else row["snapshot"]

    async def cancel(self, response_id: str, scope: str) -> tuple[Snapshot, bool] | None:
        """``(snapshot, changed)``; ``changed`` is false when it was already terminal."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                UPDATE lgos_background_responses
                SET status = 'cancelled', updated_at = now(),
                    snapshot = jsonb_set(snapshot, '{status}', '"cancelled"')
                WHERE id = %s AND scope = %s AND status IN ('queued', 'in_progress')
                RETURNING snapshot
                """,
                (response_id, scope),
            )
            row = await cursor.fetchone()
            if row is not None:
                return row["snapshot"], True
            cursor = await conn.execute(
                "SELECT snapshot FROM lgos_background_responses WHERE id = %s AND scope = %s",
                (response_id, scope),
            )
            row = await cursor.fetchone()
        return None if row is None else (row["snapshot"], False)

    async def claim(self, response_id: str, worker: str) -> BackgroundJob | None:
        """Take a queued job; ``None`` when it was cancelled, or another delivery took it."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                UPDATE lgos_background_responses
                SET status = 'in_progress', worker = %s, heartbeat_at = now(),
                    started_at = now(), updated_at = now(),
                    snapshot = jsonb_set(snapshot, '{status}', '"in_progress"')
                WHERE id = %s AND status = 'queued'
                RETURNING job
                """,
                (worker, response_id),
            )
            row = await cursor.fetchone()
        return None if row is None else BackgroundJob.from_json(row["job"])

    async def heartbeat(self, response_id: str, worker: str, snapshot: Snapshot | None) -> bool:
        """Renew the job's heartbeat (and publish ``snapshot``); false once it is not ours to
        run any more (cancelled, or failed by a sweep)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                UPDATE lgos_background_responses
                SET heartbeat_at = now(), updated_at = now(),
                    snapshot = COALESCE(%s, snapshot)
                WHERE id = %s AND worker = %s AND status = 'in_progress'
                """,
                (jsonb(snapshot) if snapshot is not None else None, response_id, worker),
            )
        return bool(cursor.rowcount == 1)

    async def finish(self, response_id: str, worker: str, final: Snapshot) -> bool:
        """Record the terminal snapshot unless the Response already ended (e.g. cancelled)."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                UPDATE lgos_background_responses
                SET status = %s, snapshot = %s, updated_at = now()
                WHERE id = %s AND worker = %s AND status = 'in_progress'
                """,
                (final["status"], jsonb(final), response_id, worker),
            )
        return bool(cursor.rowcount == 1)

    async def fail(
        self, response_id: str, worker: str, message: str, snapshot: Snapshot | None = None
    ) -> bool:
        """Fail a job this worker runs, from ``snapshot`` (its partial output) if given."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"""
                UPDATE lgos_background_responses SET {_FAIL}
                WHERE id = %(id)s AND worker = %(worker)s AND status = 'in_progress'
                """,
                _fail_params(message, snapshot, id=response_id, worker=worker),
            )
        return bool(cursor.rowcount == 1)

    async def queue_stats(self) -> tuple[int, float]:
        """This queue's jobs waiting for a worker, and the oldest one's age in seconds."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                SELECT count(*) AS depth,
                    COALESCE(EXTRACT(EPOCH FROM now() - min(created_at)), 0) AS oldest
                FROM lgos_background_responses WHERE status = 'queued' AND queue = %s
                """,
                (self.queue,),
            )
            row = await cursor.fetchone()
        assert row is not None
        return int(row["depth"]), float(row["oldest"])

    async def undispatched(self, response_ids: list[str] | None = None) -> int:
        """Mark queued jobs (``None``: every queued job of this queue) as never dispatched, so
        the next sweep dispatches them at once instead of after ``requeue_after``: after a
        dispatch failed, or after Redis came back and may have lost the stream."""
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                """
                UPDATE lgos_background_responses SET dispatched_at = '-infinity'
                WHERE status = 'queued' AND queue = %s
                    AND (%s::text[] IS NULL OR id = ANY(%s::text[]))
                """,
                (self.queue, response_ids, response_ids),
            )
        return int(cursor.rowcount)

    async def sweep(
        self, *, stale_after: float, requeue_after: float, retention: float
    ) -> SweepResult:
        async with self.pool.connection() as conn:
            cursor = await conn.execute(
                f"""
                UPDATE lgos_background_responses SET {_FAIL}
                WHERE status = 'in_progress'
                    AND heartbeat_at < now() - make_interval(secs => %(stale)s)
                RETURNING id
                """,
                _fail_params(WORKER_LOST_MESSAGE, stale=stale_after),
            )
            failed = [row["id"] for row in await cursor.fetchall()]
            cursor = await conn.execute(
                """
                UPDATE lgos_background_responses SET dispatched_at = now()
                WHERE status = 'queued' AND queue = %s
                    AND dispatched_at < now() - make_interval(secs => %s)
                RETURNING id
                """,
                (self.queue, requeue_after),
            )
            requeue = [row["id"] for row in await cursor.fetchall()]
            await conn.execute(
                "DELETE FROM lgos_background_idempotency_keys WHERE expires_at < now()"
            )
            await conn.execute(
                """
                DELETE FROM lgos_background_responses
                WHERE status IN ('completed', 'incomplete', 'failed', 'cancelled')
                    AND updated_at < now() - make_interval(secs => %s)
                """,
                (retention,),
            )
        return SweepResult(failed=failed, requeue=requeue)
