"""Local-disk storage: one file per object, written to a temporary name and renamed into place."""

from __future__ import annotations

import contextlib
import os
import shutil
import time
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
        # Leftovers of a crash mid-write are never visible objects; the orphan sweep removes
        # them once stale (not all at start: another instance may be writing into this folder).
        self.incoming.mkdir(parents=True, exist_ok=True)

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

    async def keys_older_than(self, seconds: float) -> list[str]:
        def scan() -> list[str]:
            cutoff = time.time() - seconds
            return [key for key, mtime in self._objects() if mtime < cutoff]

        return await anyio.to_thread.run_sync(scan)

    async def remove_partial(self, older_than: float) -> int:
        def remove() -> int:
            cutoff, removed = time.time() - older_than, 0
            for part in self.incoming.glob("*.part"):
                try:
                    # A live writer touches its part with every chunk it copies.
                    if part.stat().st_mtime < cutoff:
                        part.unlink()
                        removed += 1
                except FileNotFoundError:
                    pass  # renamed into place or removed by its writer meanwhile
            return removed

        return await anyio.to_thread.run_sync(remove)

    def _objects(self) -> list[tuple[str, float]]:
        found = []
        for path in self.root.glob("*/*"):
            if path.parent == self.incoming:
                continue
            with contextlib.suppress(FileNotFoundError):  # deleted meanwhile
                found.append((path.name, path.stat().st_mtime))
        return found

    def keys(self) -> list[str]:
        """Every stored key (tests and maintenance)."""
        return sorted(p.name for p in self.root.glob("*/*") if p.parent != self.incoming)
