"""Interrupt runs paused awaiting an answer, per graph, counted in the durable checkpoint store.

A run's thread is in the store from its first pause until it finishes, ends in an error or
expires (the sweep deletes it); runs write with exit durability, so a first invocation leaves
nothing before it pauses. Counting the threads therefore counts the paused runs (one being
answered right now counts until it ends). Counting on scrape rather than keeping a gauge up
and down on pause and resume keeps it right whichever process paused, answered or swept a
run, and after a process was killed between the two.
"""

from __future__ import annotations

from typing import Any

from lgos.interrupts.sweep import THREAD_PREFIX

TIMEOUT_MS = 2000
"""The longest a count may take: a scrape answers without it rather than wait."""

_POSTGRES = """
SELECT metadata->>'lgos_model' AS graph, count(DISTINCT thread_id) AS runs
FROM checkpoints WHERE checkpoint_ns = '' AND thread_id LIKE %s
GROUP BY 1
"""
_SQLITE = """
SELECT json_extract(CAST(metadata AS TEXT), '$.lgos_model') AS graph,
    count(DISTINCT thread_id) AS runs
FROM checkpoints WHERE checkpoint_ns = '' AND thread_id LIKE ?
GROUP BY 1
"""


async def pending_runs(saver: Any) -> dict[str, int]:
    """Graph name → paused runs, from the saver LGOS opened (PostgreSQL or SQLite)."""
    like = f"{THREAD_PREFIX}%"
    rows: list[tuple[str | None, int]]
    from psycopg_pool import AsyncConnectionPool

    if isinstance(saver.conn, AsyncConnectionPool):
        async with saver.conn.connection() as conn, conn.transaction():
            await conn.execute(f"SET LOCAL statement_timeout = {TIMEOUT_MS}")
            cursor = await conn.execute(_POSTGRES, (like,))
            rows = [(row["graph"], row["runs"]) for row in await cursor.fetchall()]
    else:  # aiosqlite, one process
        async with saver.conn.execute(_SQLITE, (like,)) as cursor:
            rows = [(graph, runs) for graph, runs in await cursor.fetchall()]
    return {graph or "unknown": int(runs) for graph, runs in rows}
