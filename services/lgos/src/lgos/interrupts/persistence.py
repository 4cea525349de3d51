"""Checkpoint persistence for interrupt runs: Postgres when configured, SQLite otherwise.

``FencedSaver`` wraps the saver of one run and refuses writes once the run's lease is lost, and
stores with each checkpoint the W3C ``traceparent`` of the span it was written in
(``lgos_paused_in`` in its metadata; the run span while the run runs): a run resumed in another
request, or another process, links its spans to the one it paused in.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, cast

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
)

from lgos.errors import LeaseLostError
from lgos.interrupts.coordinator import Lease, RunCoordinator
from lgos.runtime.spans import current_traceparent
from lgos.storage import PostgresLimits, migrated, open_pool

logger = logging.getLogger("lgos.interrupts")
#: Checkpoint metadata: the ``traceparent`` of the span the checkpoint was written in.
PAUSED_IN = "lgos_paused_in"


async def open_saver(
    stack: AsyncExitStack,
    postgres_uri: str | None,
    state_dir: Path,
    limits: PostgresLimits | None = None,
) -> Any:
    """The shared Postgres saver (pooled, migrated) or the embedded SQLite one."""
    if postgres_uri:
        from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

        pool = await open_pool(stack, postgres_uri, limits)
        saver: Any = AsyncPostgresSaver(pool)
        await migrated(pool, saver.setup)
        return saver
    import aiosqlite
    from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

    await asyncio.to_thread(state_dir.mkdir, parents=True, exist_ok=True)
    connection = await aiosqlite.connect(state_dir / "checkpoints.sqlite")
    stack.push_async_callback(connection.close)
    saver = AsyncSqliteSaver(connection)
    await saver.setup()
    return saver


class FencedSaver(BaseCheckpointSaver[Any]):
    """Delegates to the shared saver; every write first checks (and renews) the run's lease."""

    def __init__(self, inner: BaseCheckpointSaver[Any], coordinator: RunCoordinator, lease: Lease):
        super().__init__(serde=inner.serde)
        self.inner = inner
        self.coordinator = coordinator
        self.lease = lease

    async def _check(self) -> None:
        if not await self.coordinator.holds(self.lease):
            raise LeaseLostError("the run's lease was lost; refusing to write its checkpoint")

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self.inner.aget_tuple(config)

    def alist(
        self,
        config: RunnableConfig | None,
        *,
        filter: dict[str, Any] | None = None,
        before: RunnableConfig | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[CheckpointTuple]:
        return self.inner.alist(config, filter=filter, before=before, limit=limit)

    async def aput(
        self,
        config: RunnableConfig,
        checkpoint: Checkpoint,
        metadata: CheckpointMetadata,
        new_versions: ChannelVersions,
    ) -> RunnableConfig:
        await self._check()
        traceparent = current_traceparent()
        if traceparent is not None:
            stamped: dict[str, Any] = {**metadata, PAUSED_IN: traceparent}
            metadata = cast(CheckpointMetadata, stamped)
        return await self.inner.aput(config, checkpoint, metadata, new_versions)

    async def aput_writes(
        self,
        config: RunnableConfig,
        writes: Sequence[tuple[str, Any]],
        task_id: str,
        task_path: str = "",
    ) -> None:
        await self._check()
        await self.inner.aput_writes(config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await self.inner.adelete_thread(thread_id)

    def get_next_version(self, current: Any, channel: Any) -> Any:
        return self.inner.get_next_version(current, channel)


async def delete_quietly(saver: BaseCheckpointSaver[Any], thread_id: str) -> None:
    """Best-effort cleanup: at most 10 s, and never raises over the error being handled."""
    try:
        await asyncio.wait_for(saver.adelete_thread(thread_id), timeout=10)
    except Exception:
        logger.warning(
            "could not delete an interrupt run's checkpoint",
            exc_info=True,
            extra={"thread_id": thread_id},
        )
