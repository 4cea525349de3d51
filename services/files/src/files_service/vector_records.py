"""Vector stores and their attached files in PostgreSQL, in OpenAI object shapes."""

from __future__ import annotations

import time
from typing import Any

from psycopg import AsyncConnection
from psycopg.errors import ForeignKeyViolation
from psycopg.rows import DictRow
from psycopg.types.json import Jsonb

from files_service.db import Pool
from files_service.pagination import PageRequest, check_cursors, list_page

Conn = AsyncConnection[DictRow]
DAY = 86400

TIMED_OUT = {"code": "server_error", "message": "Indexing did not finish in time."}


async def fail_overdue(conn: Conn) -> None:
    """Fail in-progress files past their deadline (the indexer timed out or its process died)."""
    await conn.execute(
        """UPDATE vector_store_files SET status = 'failed', last_error = %s
           WHERE status = 'in_progress' AND deadline < %s""",
        (Jsonb(TIMED_OUT), int(time.time())),
    )


# --- vector stores ---------------------------------------------------------------------------


async def create_store(
    pool: Pool,
    store_id: str,
    name: str,
    metadata: dict[str, str] | None,
    expires_after_days: int | None,
) -> None:
    now = int(time.time())
    async with pool.connection() as conn:
        await conn.execute(
            """INSERT INTO vector_stores (id, name, metadata, expires_after_days, created_at,
                                          last_active_at)
               VALUES (%s, %s, %s, %s, %s, %s)""",
            (store_id, name, Jsonb(metadata) if metadata else None, expires_after_days, now, now),
        )


_STORE_SELECT = """
SELECT s.*,
       count(f.file_id) AS total,
       count(*) FILTER (WHERE f.status = 'in_progress') AS in_progress,
       count(*) FILTER (WHERE f.status = 'completed') AS completed,
       count(*) FILTER (WHERE f.status = 'failed') AS failed,
       count(*) FILTER (WHERE f.status = 'cancelled') AS cancelled,
       coalesce(sum(f.usage_bytes), 0) AS usage_bytes
FROM (SELECT * FROM vector_stores WHERE {where}) s
LEFT JOIN vector_store_files f ON f.vector_store_id = s.id
GROUP BY s.id, s.seq, s.name, s.metadata, s.expires_after_days, s.created_at, s.last_active_at
"""


def _store_object(row: dict[str, Any]) -> dict[str, Any]:
    days = row["expires_after_days"]
    expires_at = row["last_active_at"] + days * DAY if days else None
    if expires_at is not None and expires_at <= time.time():
        status = "expired"
    elif row["in_progress"]:
        status = "in_progress"
    else:
        status = "completed"
    return {
        "id": row["id"],
        "object": "vector_store",
        "created_at": row["created_at"],
        "name": row["name"],
        "usage_bytes": int(row["usage_bytes"]),
        "file_counts": {
            key: int(row[key])
            for key in ("in_progress", "completed", "failed", "cancelled", "total")
        },
        "status": status,
        "expires_after": {"anchor": "last_active_at", "days": days} if days else None,
        "expires_at": expires_at,
        "last_active_at": row["last_active_at"],
        "metadata": row["metadata"] or {},
    }


async def get_store(pool: Pool, store_id: str) -> dict[str, Any] | None:
    async with pool.connection() as conn:
        await fail_overdue(conn)
        cursor = await conn.execute(_STORE_SELECT.format(where="id = %s"), (store_id,))
        row = await cursor.fetchone()
    return _store_object(row) if row else None


async def list_stores(pool: Pool, page: PageRequest) -> dict[str, Any]:
    where, params = page.clause("vector_stores")
    async with pool.connection() as conn:
        await check_cursors(conn, page, "vector_stores")
        await fail_overdue(conn)
        cursor = await conn.execute(
            _STORE_SELECT.format(where=where.as_string(conn))
            + f" ORDER BY s.seq {page.scan} LIMIT %s",
            [*params, page.limit + 1],
        )
        rows = await cursor.fetchall()
    return list_page([_store_object(row) for row in rows], page)


async def delete_store(pool: Pool, store_id: str) -> bool:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "DELETE FROM vector_stores WHERE id = %s RETURNING id", (store_id,)
        )
        return await cursor.fetchone() is not None


async def touch_store(pool: Pool, store_id: str) -> None:
    async with pool.connection() as conn:
        await conn.execute(
            "UPDATE vector_stores SET last_active_at = %s WHERE id = %s",
            (int(time.time()), store_id),
        )


# --- files attached to a store ---------------------------------------------------------------


def _file_object(row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": row["file_id"],
        "object": "vector_store.file",
        "created_at": row["created_at"],
        "vector_store_id": row["vector_store_id"],
        "status": row["status"],
        "last_error": row["last_error"],
        "usage_bytes": int(row["usage_bytes"]),
        "chunking_strategy": row["chunking"],
        "attributes": row["attributes"] or {},
    }


async def attach(
    pool: Pool,
    store_id: str,
    file_id: str,
    chunking: dict[str, Any],
    attributes: dict[str, Any] | None,
    deadline_seconds: float,
) -> tuple[dict[str, Any], bool] | None:
    """Attach a file (``in_progress``); re-attaching returns the existing row and ``False``.

    ``None`` when the file or the store was deleted meanwhile (a race with a concurrent delete).
    """
    now = int(time.time())
    async with pool.connection() as conn:
        try:
            cursor = await conn.execute(
                """INSERT INTO vector_store_files (vector_store_id, file_id, status, chunking,
                                                   attributes, created_at, deadline)
                   VALUES (%s, %s, 'in_progress', %s, %s, %s, %s)
                   ON CONFLICT (vector_store_id, file_id) DO NOTHING RETURNING *""",
                (
                    store_id,
                    file_id,
                    Jsonb(chunking),
                    Jsonb(attributes) if attributes else None,
                    now,
                    now + int(deadline_seconds) + 5,
                ),
            )
        except ForeignKeyViolation:
            return None
        row = await cursor.fetchone()
        if row is not None:
            return _file_object(row), True
    existing = await get_file(pool, store_id, file_id)
    return (existing, False) if existing is not None else None


async def get_file(pool: Pool, store_id: str, file_id: str) -> dict[str, Any] | None:
    async with pool.connection() as conn:
        await fail_overdue(conn)
        cursor = await conn.execute(
            "SELECT * FROM vector_store_files WHERE vector_store_id = %s AND file_id = %s",
            (store_id, file_id),
        )
        row = await cursor.fetchone()
    return _file_object(row) if row else None


async def list_files(
    pool: Pool, store_id: str, page: PageRequest, status: str | None
) -> dict[str, Any]:
    scope = ("vector_store_id", store_id)
    where, params = page.clause("vector_store_files", "file_id", scope)
    extra = ""
    if status is not None:
        extra = " AND status = %s"
        params.append(status)
    async with pool.connection() as conn:
        await check_cursors(conn, page, "vector_store_files", "file_id", scope)
        await fail_overdue(conn)
        cursor = await conn.execute(
            f"SELECT * FROM vector_store_files WHERE vector_store_id = %s "
            f"AND {where.as_string(conn)}{extra} ORDER BY seq {page.scan} LIMIT %s",
            [store_id, *params, page.limit + 1],
        )
        rows = await cursor.fetchall()
    return list_page([_file_object(row) for row in rows], page)


async def detach(pool: Pool, store_id: str, file_id: str) -> bool:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """DELETE FROM vector_store_files WHERE vector_store_id = %s AND file_id = %s
               RETURNING file_id""",
            (store_id, file_id),
        )
        return await cursor.fetchone() is not None


async def finish(
    conn: Conn,
    store_id: str,
    file_id: str,
    *,
    usage_bytes: int = 0,
    error: dict[str, str] | None = None,
) -> None:
    await conn.execute(
        """UPDATE vector_store_files SET status = %s, last_error = %s, usage_bytes = %s
           WHERE vector_store_id = %s AND file_id = %s AND status = 'in_progress'""",
        (
            "failed" if error else "completed",
            Jsonb(error) if error else None,
            usage_bytes,
            store_id,
            file_id,
        ),
    )
