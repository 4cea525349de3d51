"""Chainlit's PostgreSQL tables (what ``ChainlitDataLayer`` reads and writes), created at start.

Chainlit ships no migrations of its own for this data layer; the columns follow the queries in
``chainlit/data/chainlit_data_layer.py`` (2.12). Idempotent: safe on every start.
"""

from __future__ import annotations

from urllib.parse import urlsplit

import asyncpg  # type: ignore[import-untyped]

ROW = """id TEXT PRIMARY KEY,
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP"""
"""The columns every table but "User" starts with (``<row>`` below)."""

SCHEMA = """
CREATE TABLE IF NOT EXISTS "User" (
    id TEXT PRIMARY KEY,
    identifier TEXT NOT NULL UNIQUE,
    metadata JSONB NOT NULL DEFAULT '{}',
    "createdAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updatedAt" TIMESTAMP(3) NOT NULL DEFAULT CURRENT_TIMESTAMP
);
CREATE TABLE IF NOT EXISTS "Thread" (
    <row>,
    "deletedAt" TIMESTAMP(3),
    name TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    tags TEXT[] DEFAULT ARRAY[]::TEXT[],
    "userId" TEXT REFERENCES "User"(id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS "Thread_userId_updatedAt" ON "Thread" ("userId", "updatedAt");
CREATE TABLE IF NOT EXISTS "Step" (
    <row>,
    "parentId" TEXT REFERENCES "Step"(id) ON DELETE CASCADE,
    "threadId" TEXT REFERENCES "Thread"(id) ON DELETE CASCADE,
    input TEXT,
    metadata JSONB NOT NULL DEFAULT '{}',
    name TEXT,
    output TEXT,
    type TEXT NOT NULL,
    "showInput" TEXT DEFAULT 'json',
    "isError" BOOLEAN DEFAULT FALSE,
    "startTime" TIMESTAMP(3) NOT NULL,
    "endTime" TIMESTAMP(3) NOT NULL
);
CREATE INDEX IF NOT EXISTS "Step_threadId_startTime" ON "Step" ("threadId", "startTime");
CREATE TABLE IF NOT EXISTS "Element" (
    <row>,
    "threadId" TEXT REFERENCES "Thread"(id) ON DELETE CASCADE,
    "stepId" TEXT REFERENCES "Step"(id) ON DELETE CASCADE,
    metadata JSONB NOT NULL DEFAULT '{}',
    mime TEXT,
    name TEXT NOT NULL,
    "objectKey" TEXT,
    url TEXT,
    "chainlitKey" TEXT,
    display TEXT,
    size TEXT,
    language TEXT,
    page INTEGER,
    "autoPlay" BOOLEAN,
    "playerConfig" JSONB,
    props JSONB DEFAULT '{}'
);
CREATE TABLE IF NOT EXISTS "Feedback" (
    <row>,
    "stepId" TEXT REFERENCES "Step"(id) ON DELETE CASCADE,
    name TEXT NOT NULL,
    value DOUBLE PRECISION NOT NULL,
    comment TEXT
);
""".replace("<row>", ROW)

# One start at a time creates the tables (two app processes may start together).
LOCK_KEY = 0x4C474F53_43484C54


async def ensure_database(database_url: str) -> None:
    """Create the URL's database when the server lacks it (the stack's PostgreSQL starts with
    only its own); needs a role allowed to create databases, as the stack's is."""
    try:
        connection = await asyncpg.connect(database_url)
    except asyncpg.InvalidCatalogNameError:
        pass
    else:
        await connection.close()
        return
    name = urlsplit(database_url).path.lstrip("/")
    admin = await asyncpg.connect(database_url, database="postgres")
    try:
        quoted = '"' + name.replace('"', '""') + '"'
        await admin.execute(f"CREATE DATABASE {quoted}")
    except asyncpg.DuplicateDatabaseError:
        pass  # another app process created it first
    finally:
        await admin.close()


async def ensure_schema(database_url: str) -> None:
    await ensure_database(database_url)
    connection = await asyncpg.connect(database_url)
    try:
        async with connection.transaction():
            await connection.execute("SELECT pg_advisory_xact_lock($1)", LOCK_KEY)
            await connection.execute(SCHEMA)
    finally:
        await connection.close()
