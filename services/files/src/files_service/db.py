"""PostgreSQL: the connection pool and the schema (created idempotently at start-up)."""

from __future__ import annotations

import asyncio
import logging

from psycopg import AsyncConnection
from psycopg.rows import DictRow, dict_row
from psycopg_pool import AsyncConnectionPool

logger = logging.getLogger("files_service.db")

Pool = AsyncConnectionPool[AsyncConnection[DictRow]]

# A fixed advisory-lock key, so two instances starting together do not race on DDL.
_SCHEMA_LOCK = 0x46494C4553

SCHEMA = """
CREATE TABLE IF NOT EXISTS files (
    seq bigserial UNIQUE,
    id text PRIMARY KEY,
    purpose text NOT NULL,
    filename text NOT NULL,
    bytes bigint NOT NULL,
    content_type text NOT NULL,
    sha256 text NOT NULL,
    created_at bigint NOT NULL,
    expires_at bigint
);
CREATE INDEX IF NOT EXISTS files_expires_at ON files (expires_at) WHERE expires_at IS NOT NULL;
ALTER TABLE files ADD COLUMN IF NOT EXISTS idempotency_key text;
CREATE UNIQUE INDEX IF NOT EXISTS files_idempotency_key ON files (idempotency_key);

CREATE TABLE IF NOT EXISTS vector_stores (
    seq bigserial UNIQUE,
    id text PRIMARY KEY,
    name text NOT NULL,
    metadata jsonb,
    expires_after_days integer,
    created_at bigint NOT NULL,
    last_active_at bigint NOT NULL
);

CREATE TABLE IF NOT EXISTS vector_store_files (
    seq bigserial UNIQUE,
    vector_store_id text NOT NULL REFERENCES vector_stores (id) ON DELETE CASCADE,
    file_id text NOT NULL REFERENCES files (id) ON DELETE CASCADE,
    status text NOT NULL,
    last_error jsonb,
    usage_bytes bigint NOT NULL DEFAULT 0,
    chunking jsonb NOT NULL,
    attributes jsonb,
    created_at bigint NOT NULL,
    deadline bigint NOT NULL,
    PRIMARY KEY (vector_store_id, file_id)
);

CREATE TABLE IF NOT EXISTS chunks (
    vector_store_id text NOT NULL,
    file_id text NOT NULL,
    idx integer NOT NULL,
    text text NOT NULL,
    tsv tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    PRIMARY KEY (vector_store_id, file_id, idx),
    FOREIGN KEY (vector_store_id, file_id)
        REFERENCES vector_store_files (vector_store_id, file_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS chunks_tsv ON chunks USING gin (tsv);
"""

# Without a fixed dimension pgvector cannot build an ANN index; searches scan one store's chunks,
# which is exact and fast enough for a knowledge base of thousands of chunks.
VECTOR_SCHEMA = """
CREATE EXTENSION IF NOT EXISTS vector;
ALTER TABLE chunks ADD COLUMN IF NOT EXISTS embedding vector;
"""


async def open_pool(
    uri: str,
    *,
    semantic: bool,
    connect_timeout: int = 5,
    pool_timeout: float = 5.0,
    reconnect_timeout: float = 5.0,
) -> Pool:
    """A pool that hands out only live connections (checked on checkout; one failed check
    sweeps the idle rest, as after a PostgreSQL restart), waits at most ``pool_timeout`` for one
    and never backs off reconnecting for longer than ``reconnect_timeout``."""
    sweeping: set[asyncio.Task[None]] = set()

    async def check(conn: AsyncConnection[DictRow]) -> None:
        try:
            await AsyncConnectionPool.check_connection(conn)
        except Exception:
            if not sweeping:
                task = asyncio.create_task(pool.check())
                sweeping.add(task)
                task.add_done_callback(sweeping.discard)
            raise

    pool: Pool = AsyncConnectionPool(
        uri,
        min_size=1,
        max_size=10,
        open=False,
        check=check,
        timeout=pool_timeout,
        reconnect_timeout=reconnect_timeout,
        kwargs={"row_factory": dict_row, "autocommit": True, "connect_timeout": connect_timeout},
        connection_class=AsyncConnection[DictRow],
    )
    await pool.open(wait=True, timeout=30)
    try:
        await migrate(pool, semantic=semantic)
    except BaseException:
        await pool.close()
        raise
    return pool


async def migrate(pool: Pool, *, semantic: bool) -> None:
    async with pool.connection() as conn, conn.transaction():
        await conn.execute("SELECT pg_advisory_xact_lock(%s)", (_SCHEMA_LOCK,))
        await conn.execute(SCHEMA)
        if semantic:
            available = await conn.execute(
                "SELECT 1 FROM pg_available_extensions WHERE name = 'vector'"
            )
            if await available.fetchone() is None:
                raise RuntimeError(
                    "semantic ranking (FILES_EMBEDDINGS_URL) needs the pgvector extension, "
                    "which this PostgreSQL server does not have"
                )
            await conn.execute(VECTOR_SCHEMA)
