"""Background indexing of attached files: bounded in time and concurrency, never silently stuck.

Each attach starts one task. It reads the bytes, extracts text, chunks it, embeds the chunks (when
an embeddings endpoint is configured) and writes them in one transaction. Any failure or the
timeout marks the file ``failed`` with a ``last_error``; details stay in the log.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from files_service import vector_records
from files_service.db import Pool
from files_service.indexing.chunking import ChunkingStrategy, chunk_text
from files_service.indexing.extract import UnsupportedFileError, extract_text
from files_service.search.embeddings import EmbeddingsClient, EmbeddingsError, vector_literal
from files_service.storage import Storage

logger = logging.getLogger("files_service.indexing")


class TooLargeToIndexError(UnsupportedFileError):
    pass


class Indexer:
    def __init__(
        self,
        pool: Pool,
        storage: Storage,
        embeddings: EmbeddingsClient | None,
        *,
        timeout: float,
        concurrency: int,
        max_bytes: int,
    ) -> None:
        self.pool = pool
        self.storage = storage
        self.embeddings = embeddings
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.slots = asyncio.Semaphore(concurrency)
        self.tasks: set[asyncio.Task[None]] = set()

    def schedule(self, store_id: str, file_id: str, strategy: ChunkingStrategy) -> None:
        task = asyncio.create_task(self.run(store_id, file_id, strategy))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def run(self, store_id: str, file_id: str, strategy: ChunkingStrategy) -> None:
        error: dict[str, str] | None = None
        usage = 0
        try:
            # The wait for a free slot counts too: a backlog fails visibly instead of hanging.
            async with asyncio.timeout(self.timeout), self.slots:
                usage = await self._index(store_id, file_id, strategy)
        except TimeoutError:
            error = vector_records.TIMED_OUT
        except UnsupportedFileError as exc:
            error = {"code": "unsupported_file", "message": str(exc)}
        except EmbeddingsError:
            logger.exception("embedding failed", extra={"file_id": file_id, "store": store_id})
            error = {"code": "server_error", "message": "The embeddings endpoint failed."}
        except asyncio.CancelledError:
            error = {"code": "server_error", "message": "Indexing was interrupted."}
            await self._record(store_id, file_id, 0, error)
            raise
        except Exception:
            logger.exception("indexing failed", extra={"file_id": file_id, "store": store_id})
            error = {"code": "server_error", "message": "Indexing failed."}
        await self._record(store_id, file_id, usage, error)

    async def _record(
        self, store_id: str, file_id: str, usage: int, error: dict[str, str] | None
    ) -> None:
        async with self.pool.connection() as conn:
            await vector_records.finish(conn, store_id, file_id, usage_bytes=usage, error=error)
        logger.info(
            "indexed" if error is None else "indexing failed",
            extra={"file_id": file_id, "store": store_id, "usage_bytes": usage, "error": error},
        )

    async def _index(self, store_id: str, file_id: str, strategy: ChunkingStrategy) -> int:
        data = bytearray()
        async for piece in self.storage.stream(file_id):
            data += piece
            if len(data) > self.max_bytes:
                raise TooLargeToIndexError(f"Files over {self.max_bytes} bytes are not indexed.")
        # CPU-bound on large files: off the event loop so other requests keep being answered.
        chunks = await asyncio.to_thread(_extract_chunks, bytes(data), strategy)
        del data
        vectors = await self.embeddings.embed(chunks) if self.embeddings and chunks else None
        rows = await asyncio.to_thread(_chunk_rows, store_id, file_id, chunks, vectors)
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(
                "DELETE FROM chunks WHERE vector_store_id = %s AND file_id = %s",
                (store_id, file_id),
            )
            async with conn.cursor() as cursor:
                if vectors:
                    await cursor.executemany(
                        """INSERT INTO chunks (vector_store_id, file_id, idx, text, embedding)
                           VALUES (%s, %s, %s, %s, %s::vector)""",
                        rows,
                    )
                else:
                    await cursor.executemany(
                        """INSERT INTO chunks (vector_store_id, file_id, idx, text)
                           VALUES (%s, %s, %s, %s)""",
                        [row[:4] for row in rows],
                    )
        return sum(len(text.encode()) for text in chunks)

    async def aclose(self) -> None:
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)


def _extract_chunks(data: bytes, strategy: ChunkingStrategy) -> list[str]:
    return chunk_text(extract_text(data), strategy)


def _chunk_rows(
    store_id: str, file_id: str, chunks: list[str], vectors: list[list[float]] | None
) -> list[tuple[Any, ...]]:
    return [
        (store_id, file_id, i, text, vector_literal(vectors[i]) if vectors else None)
        for i, text in enumerate(chunks)
    ]
