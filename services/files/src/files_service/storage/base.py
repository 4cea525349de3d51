"""The storage interface both backends implement, apart from the factory that picks one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Protocol

CHUNK_SIZE = 1024 * 1024
"""Bytes per read when streaming in or out; memory per transfer stays around this size."""


class Readable(Protocol):
    """What storage reads uploads from: any object with a bytes ``read(size)``."""

    def read(self, size: int = -1, /) -> bytes: ...


class Storage(Protocol):
    async def open(self) -> None:
        """Prepare the backend (folders, bucket check) before the first request."""

    async def put(self, key: str, source: Readable, length: int) -> None:
        """Store ``length`` bytes read from ``source``; all or nothing."""

    def stream(self, key: str) -> AsyncIterator[bytes]:
        """The stored bytes in chunks of at most :data:`CHUNK_SIZE`."""

    async def delete(self, key: str) -> None:
        """Remove an object; removing a missing one is not an error."""

    async def exists(self, key: str) -> bool: ...

    async def keys_older_than(self, seconds: float) -> list[str]:
        """Stored keys last written more than ``seconds`` ago (the orphan sweep's candidates)."""

    async def remove_partial(self, older_than: float) -> int:
        """Remove writes a killed process left unfinished, untouched for ``older_than`` seconds;
        return how many. Younger ones may belong to an upload still running elsewhere."""
