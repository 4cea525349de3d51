"""Shared storage the whole app opens once: the Postgres pool and the graphs' LangGraph Store.

Interrupt checkpoints, background records and the Store all draw their connections from here.
Every pool hands out only live connections (each is checked on checkout, and one failed check
sweeps the others, as after a PostgreSQL restart), waits a bounded time for one while PostgreSQL
is down (then fails fast until it answers again), and never backs off reconnecting for longer
than ``reconnect_timeout``, so the first request after an outage reconnects at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.rows import dict_row
from psycopg_pool import AsyncConnectionPool, PoolTimeout

if TYPE_CHECKING:
    from lgos.settings import LGOSSettings


MIGRATION_LOCK = 0x4C474F53
"""The PostgreSQL advisory lock key schema set-up holds ("LGOS")."""
MIGRATION_POLL = 0.1
"""Seconds between tries for that lock."""


@dataclass(frozen=True, slots=True)
class PostgresLimits:
    """How long the pools wait on PostgreSQL (see the ``postgres_*`` settings)."""

    connect_timeout: int = 5
    pool_timeout: float = 5.0
    reconnect_timeout: float = 5.0
    max_size: int = 10

    @classmethod
    def from_settings(cls, settings: LGOSSettings) -> PostgresLimits:
        return cls(
            connect_timeout=settings.postgres_connect_timeout,
            pool_timeout=settings.postgres_pool_timeout,
            reconnect_timeout=settings.postgres_reconnect_timeout,
            max_size=settings.postgres_pool_size,
        )


async def open_pool(
    stack: AsyncExitStack, postgres_uri: str, limits: PostgresLimits | None = None
) -> Any:
    limits = limits or PostgresLimits()
    pool = LivePool(
        postgres_uri,
        min_size=1,
        max_size=limits.max_size,
        open=False,
        timeout=limits.pool_timeout,
        reconnect_timeout=limits.reconnect_timeout,
        kwargs={
            "autocommit": True,
            "prepare_threshold": 0,
            "row_factory": dict_row,
            "connect_timeout": limits.connect_timeout,
        },
    )
    await pool.open(wait=True)
    stack.push_async_callback(pool.close)
    return pool


class LivePool(AsyncConnectionPool[Any]):
    """A pool that hands out only live connections and fails fast while PostgreSQL is down.

    Each connection is checked on checkout; a failed check also sweeps the idle rest (a
    restart killed them all). Once a checkout timed out, the pool counts PostgreSQL as
    unreachable: until one direct connection succeeds again, each checkout first tries one
    (refused at once while the server is down) instead of waiting ``timeout`` once more, so
    a request that needs several connections fails in one wait, not one per connection.
    """

    def __init__(self, conninfo: str, **kwargs: Any) -> None:
        super().__init__(conninfo, check=self._check_live, **kwargs)
        self.unreachable = False
        self._sweeps: set[asyncio.Task[None]] = set()

    async def getconn(self, timeout: float | None = None) -> Any:  # noqa: ASYNC109
        if self.unreachable:
            await self._probe()
        try:
            return await super().getconn(timeout)
        except PoolTimeout:
            self.unreachable = True
            raise

    async def _probe(self) -> None:
        assert isinstance(self.conninfo, str)
        assert isinstance(self.kwargs, dict)
        try:
            conn = await psycopg.AsyncConnection.connect(self.conninfo, **self.kwargs)
        except psycopg.OperationalError as exc:
            raise PoolTimeout("PostgreSQL is unreachable") from exc
        await conn.close()
        self.unreachable = False

    async def _check_live(self, conn: Any) -> None:
        try:
            await AsyncConnectionPool.check_connection(conn)
        except Exception:
            if not self._sweeps:
                task = asyncio.create_task(self.check())
                self._sweeps.add(task)
                task.add_done_callback(self._sweeps.discard)
            raise


async def migrated(pool: Any, setup: Callable[[], Awaitable[object]]) -> None:
    """Run ``setup`` (a schema migration through ``pool``) holding an advisory lock on a
    connection of its own: processes starting together on a fresh database would otherwise race
    to create the same tables and version rows, and all but one would fail."""
    async with await psycopg.AsyncConnection.connect(pool.conninfo, **pool.kwargs) as lock:
        # Polled, not waited for in one statement: a waiting statement is an open transaction,
        # which the holder's CREATE INDEX CONCURRENTLY would wait for in turn (a deadlock).
        while not await _try_lock(lock):  # noqa: ASYNC110 (the lock is another process's)
            await asyncio.sleep(MIGRATION_POLL)
        await setup()  # closing the connection releases the lock


async def _try_lock(connection: Any) -> bool:
    cursor = await connection.execute("SELECT pg_try_advisory_lock(%s) AS taken", (MIGRATION_LOCK,))
    row = await cursor.fetchone()
    return bool(row and row["taken"])


async def open_store(
    stack: AsyncExitStack, postgres_uri: str | None, limits: PostgresLimits | None = None
) -> Any:
    """The graphs' LangGraph Store: Postgres (pooled, migrated) when configured, else memory."""
    if not postgres_uri:
        from langgraph.store.memory import InMemoryStore

        return InMemoryStore()
    from langgraph.store.postgres.aio import AsyncPostgresStore

    pool = await open_pool(stack, postgres_uri, limits)
    store = AsyncPostgresStore(pool)
    await migrated(pool, store.setup)
    return store
