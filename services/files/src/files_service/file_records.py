"""File metadata rows in PostgreSQL, and their OpenAI ``file`` object shape."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from psycopg import errors, sql

from files_service.db import Pool
from files_service.pagination import PageRequest, check_cursors, list_page

LIVE = "(expires_at IS NULL OR expires_at > %s)"
"""Expired files are gone for clients at once; the sweep removes their bytes later."""


@dataclass(frozen=True)
class FileRecord:
    id: str
    purpose: str
    filename: str
    bytes: int
    content_type: str
    sha256: str
    created_at: int
    expires_at: int | None
    idempotency_key: str | None = None
    """The upload's ``Idempotency-Key``: a retry with it gets this file, not a second one."""

    def live(self, now: int) -> bool:
        return self.expires_at is None or self.expires_at > now

    def to_object(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "file",
            "bytes": self.bytes,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
            "filename": self.filename,
            "purpose": self.purpose,
            "status": "processed",
            "status_details": None,
        }


def _record(row: dict[str, Any]) -> FileRecord:
    return FileRecord(**{k: row[k] for k in FileRecord.__dataclass_fields__})


class KeyTakenError(Exception):
    """Another upload recorded a file under the same ``Idempotency-Key`` first."""


async def insert(pool: Pool, record: FileRecord) -> None:
    """Write the row; ``KeyTakenError`` when its idempotency key already names a file."""
    try:
        async with pool.connection() as conn:
            await conn.execute(
                """INSERT INTO files (id, purpose, filename, bytes, content_type, sha256,
                                      created_at, expires_at, idempotency_key)
                   VALUES (%(id)s, %(purpose)s, %(filename)s, %(bytes)s, %(content_type)s,
                           %(sha256)s, %(created_at)s, %(expires_at)s, %(idempotency_key)s)""",
                record.__dict__,
            )
    except errors.UniqueViolation as error:
        if error.diag.constraint_name == "files_idempotency_key":
            raise KeyTakenError(record.idempotency_key) from None
        raise


async def by_idempotency_key(pool: Pool, key: str) -> FileRecord | None:
    """The file recorded under ``key``, expired or not (its row holds the key until swept)."""
    async with pool.connection() as conn:
        cursor = await conn.execute("SELECT * FROM files WHERE idempotency_key = %s", (key,))
        row = await cursor.fetchone()
    return _record(row) if row else None


async def get(pool: Pool, file_id: str) -> FileRecord | None:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            f"SELECT * FROM files WHERE id = %s AND {LIVE}", (file_id, int(time.time()))
        )
        row = await cursor.fetchone()
    return _record(row) if row else None


async def list_files(pool: Pool, page: PageRequest, purpose: str | None) -> dict[str, Any]:
    where, params = page.clause("files")
    filters = [where, sql.SQL(LIVE)]
    params.append(int(time.time()))
    if purpose is not None:
        filters.append(sql.SQL("purpose = %s"))
        params.append(purpose)
    query = sql.SQL("SELECT * FROM files WHERE {} {} LIMIT %s").format(
        sql.SQL(" AND ").join(filters), page.order_by()
    )
    async with pool.connection() as conn:
        await check_cursors(conn, page, "files")
        cursor = await conn.execute(query, [*params, page.limit + 1])
        rows = await cursor.fetchall()
    return list_page([_record(row).to_object() for row in rows], page)


async def delete(pool: Pool, file_id: str) -> bool:
    """Delete the file's row (its vector-store entries go with it); False when there is none."""
    async with pool.connection() as conn:
        cursor = await conn.execute("DELETE FROM files WHERE id = %s RETURNING id", (file_id,))
        return await cursor.fetchone() is not None


async def missing(pool: Pool, file_ids: list[str]) -> list[str]:
    """Those of ``file_ids`` that have no row (expired rows still count: they are the expiry
    sweep's to remove, with their bytes)."""
    async with pool.connection() as conn:
        cursor = await conn.execute(
            """SELECT k.id FROM unnest(%s::text[]) AS k(id)
               WHERE NOT EXISTS (SELECT FROM files f WHERE f.id = k.id)""",
            (file_ids,),
        )
        return [row["id"] for row in await cursor.fetchall()]


async def expired(pool: Pool, limit: int = 100) -> list[str]:
    async with pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT id FROM files WHERE expires_at <= %s ORDER BY expires_at LIMIT %s",
            (int(time.time()), limit),
        )
        return [row["id"] for row in await cursor.fetchall()]
