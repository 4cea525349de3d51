"""What one running service holds: settings, the database pool, storage, indexer, embeddings."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

from files_service import file_records
from files_service.db import Pool, open_pool
from files_service.indexing.indexer import Indexer
from files_service.search.embeddings import EmbeddingsClient
from files_service.settings import FilesSettings
from files_service.storage import Storage, create_storage

logger = logging.getLogger("files_service.state")


@dataclass
class FilesState:
    settings: FilesSettings
    storage: Storage
    _pool: Pool | None = None
    _indexer: Indexer | None = None
    embeddings: EmbeddingsClient | None = None
    _sweeper: asyncio.Task[None] | None = field(default=None, repr=False)

    @classmethod
    def from_settings(cls, settings: FilesSettings) -> FilesState:
        return cls(settings=settings, storage=create_storage(settings))

    @property
    def pool(self) -> Pool:
        assert self._pool is not None, "the app's lifespan has not started"
        return self._pool

    @property
    def indexer(self) -> Indexer:
        assert self._indexer is not None, "the app's lifespan has not started"
        return self._indexer

    async def open(self) -> None:
        settings = self.settings
        await self.storage.open()
        semantic = settings.embeddings_url is not None
        self._pool = await open_pool(
            settings.postgres_uri,
            semantic=semantic,
            connect_timeout=settings.postgres_connect_timeout,
            pool_timeout=settings.postgres_pool_timeout,
            reconnect_timeout=settings.postgres_reconnect_timeout,
        )
        if semantic:
            self.embeddings = EmbeddingsClient(settings)
        else:
            logger.info("no FILES_EMBEDDINGS_URL: search ranks by full text only")
        if not settings.api_keys:
            logger.warning("no FILES_API_KEYS: every request is accepted (local use only)")
        self._indexer = Indexer(
            self._pool,
            self.storage,
            self.embeddings,
            timeout=settings.indexing_timeout,
            concurrency=settings.indexing_concurrency,
            max_bytes=settings.max_index_bytes,
        )
        if settings.sweep_interval > 0:
            self._sweeper = asyncio.create_task(self._sweep_forever(settings.sweep_interval))

    async def aclose(self) -> None:
        if self._sweeper is not None:
            self._sweeper.cancel()
            await asyncio.gather(self._sweeper, return_exceptions=True)
        if self._indexer is not None:
            await self._indexer.aclose()
        if self.embeddings is not None:
            await self.embeddings.aclose()
        if self._pool is not None:
            await self._pool.close()

    async def delete_file(self, file_id: str) -> bool:
        """Delete the row, then the bytes. Bytes that cannot be removed now, or a process killed
        between the two, leave bytes without a row, which the orphan sweep removes; never a row
        without bytes, whose download could only fail."""
        if not await file_records.delete(self.pool, file_id):
            return False
        try:
            await self.storage.delete(file_id)
        except Exception:
            logger.warning(
                "file bytes left to the orphan sweep", extra={"file_id": file_id}, exc_info=True
            )
        return True

    async def sweep_expired(self) -> int:
        removed = 0
        for file_id in await file_records.expired(self.pool):
            try:
                removed += await self.delete_file(file_id)
            except Exception:
                # One file whose bytes cannot be removed must not stall the sweep behind it.
                logger.warning(
                    "expired file not removed", extra={"file_id": file_id}, exc_info=True
                )
        return removed

    async def sweep_orphans(self, batch: int = 1000) -> int:
        """Remove bytes no file row owns: unfinished writes and stored objects a killed process
        left between storing the bytes and recording the row. Only those older than
        ``orphan_grace``, so an upload in flight (bytes stored, row not yet written) is safe."""
        grace = self.settings.orphan_grace
        removed = await self.storage.remove_partial(grace)
        keys = await self.storage.keys_older_than(grace)
        for start in range(0, len(keys), batch):
            for orphan in await file_records.missing(self.pool, keys[start : start + batch]):
                try:
                    await self.storage.delete(orphan)
                    removed += 1
                except Exception:
                    logger.warning("orphan not removed", extra={"key": orphan}, exc_info=True)
        return removed

    async def _sweep_forever(self, interval: float) -> None:
        # The first round runs at start-up: what a crash left behind goes as soon as it is stale.
        while True:
            try:
                if removed := await self.sweep_expired():
                    logger.info("expired files removed", extra={"count": removed})
            except Exception:
                logger.warning("expired-file sweep failed", exc_info=True)
            try:
                if removed := await self.sweep_orphans():
                    logger.info("orphaned bytes removed", extra={"count": removed})
            except Exception:
                logger.warning("orphan sweep failed", exc_info=True)
            await asyncio.sleep(interval)
