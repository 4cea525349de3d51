"""Shared storage the whole app opens once: the Postgres pool and the graphs' LangGraph Store.

Interrupt checkpoints, background records and the Store all draw their connections from here.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from typing import Any


async def open_pool(stack: AsyncExitStack, postgres_uri: str) -> Any:
    from psycopg.rows import dict_row
    from psycopg_pool import AsyncConnectionPool

    pool: AsyncConnectionPool[Any] = AsyncConnectionPool(
        postgres_uri,
        min_size=1,
        max_size=10,
        open=False,
        kwargs={"autocommit": True, "prepare_threshold": 0, "row_factory": dict_row},
    )
    await pool.open(wait=True)
    stack.push_async_callback(pool.close)
    return pool


async def open_store(stack: AsyncExitStack, postgres_uri: str | None) -> Any:
    """The graphs' LangGraph Store: Postgres (pooled, migrated) when configured, else memory."""
    if not postgres_uri:
        from langgraph.store.memory import InMemoryStore

        return InMemoryStore()
    from langgraph.store.postgres.aio import AsyncPostgresStore

    store = AsyncPostgresStore(await open_pool(stack, postgres_uri))
    await store.setup()
    return store
