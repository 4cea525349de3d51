"""Local-disk storage: one file per object, written to a temporary name and renamed into place."""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import anyio
import anyio.to_thread

from files_service.storage.base import CHUNK_SIZE, Readable


class DiskStorage:
    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.incoming = self.root / ".incoming"

    async def open(self) -> None:
        self.incoming.mkdir(parents=True, exist_ok=True)
        # Leftovers of a crash mid-write are never visible objects; clear them.
        for leftover in self.incoming.iterdir():
            leftover.unlink(missing_ok=True)

    def path(self, key: str) -> Path:
        # Keys are service-made ids; refuse anything that could leave the root anyway.
        if not key or "/" in key or "\\" in key or key.startswith("."):
            raise ValueError(f"invalid storage key {key!r}")
        return self.root / key[-2:] / key

    async def put(self, key: str, source: Readable, length: int) -> None:
        await anyio.to_thread.run_sync(self._put, key, source, length)

    def _put(self, key: str, source: Readable, length: int) -> None:
        target = self.path(key)
        temp = self.incoming / f"{uuid.uuid4().hex}.part"
        try:
            with temp.open("wb") as out:
                shutil.copyfileobj(source, out, CHUNK_SIZE)
                out.flush()
                os.fsync(out.fileno())
            if temp.stat().st_size != length:
                raise OSError(f"wrote {temp.stat().st_size} bytes, expected {length}")
            target.parent.mkdir(parents=True, exist_ok=True)
            os.replace(temp, target)  # atomic: readers see the whole file or none
        finally:
            temp.unlink(missing_ok=True)

    async def stream(self, key: str) -> AsyncIterator[bytes]:
        async with await anyio.open_file(self.path(key), "rb") as handle:
            while chunk := await handle.read(CHUNK_SIZE):
                yield chunk

    async def delete(self, key: str) -> None:
        await anyio.to_thread.run_sync(lambda: self.path(key).unlink(missing_ok=True))

    async def exists(self, key: str) -> bool:
        return await anyio.to_thread.run_sync(self.path(key).is_file)

    def keys(self) -> list[str]:
        """Every stored key (tests and maintenance)."""
        return sorted(p.name for p in self.root.glob("*/*") if p.parent != self.incoming)
