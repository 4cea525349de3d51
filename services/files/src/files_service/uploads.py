"""Streaming uploads: the body-size limits, hashing while copying, and the all-or-nothing store.

The multipart parser spools the file part to a temporary file (at most 1 MiB in memory); the bytes
are then copied to storage in 1 MiB reads while their sha256 is computed, so memory stays flat
whatever the file size. The row is written only after the bytes are stored, and the bytes are
removed again if the row cannot be written: no failure leaves one without the other.
"""

from __future__ import annotations

import functools
import hashlib
import logging
from typing import Any, BinaryIO

import anyio
from service_kit.limits import Limit

from files_service import file_records
from files_service.db import Pool
from files_service.errors import BodyTooLargeError, TooLargeError
from files_service.file_records import FileRecord
from files_service.storage import Readable, Storage
from files_service.storage.base import CHUNK_SIZE

logger = logging.getLogger("files_service.uploads")

MULTIPART_OVERHEAD = 64 * 1024
"""Room for boundaries and the small form fields around the file part."""

MAX_JSON_BODY = 1024 * 1024
"""Every other route takes a small JSON body; anything larger is refused, not read into memory."""


JSON_BODY_LIMIT = Limit(MAX_JSON_BODY, functools.partial(BodyTooLargeError, MAX_JSON_BODY))


def upload_limit(max_upload_bytes: int) -> dict[tuple[str, str], Limit]:
    """``POST /v1/files`` may carry up to the upload limit, plus the form around the file."""
    allowed = max_upload_bytes + MULTIPART_OVERHEAD
    return {
        ("POST", "/v1/files"): Limit(allowed, functools.partial(TooLargeError, max_upload_bytes))
    }


class HashingReader:
    """A file-like reader that hashes and counts what passes through it."""

    def __init__(self, source: Readable) -> None:
        self.source = source
        self.digest = hashlib.sha256()
        self.count = 0

    def read(self, size: int = -1) -> bytes:
        data = self.source.read(size)
        self.digest.update(data)
        self.count += len(data)
        return data


async def digest(source: BinaryIO) -> tuple[str, int]:
    """The sha256 and length of a spooled upload, read from its start in a thread."""

    def read_all() -> tuple[str, int]:
        source.seek(0)
        reader = HashingReader(source)
        while reader.read(CHUNK_SIZE):
            pass
        return reader.digest.hexdigest(), reader.count

    return await anyio.to_thread.run_sync(read_all)


async def store(
    pool: Pool, storage: Storage, source: Readable, length: int, fields: dict[str, Any]
) -> FileRecord:
    """Copy ``source`` into storage under the new id, then write its row; undo on any failure."""
    reader = HashingReader(source)
    file_id: str = fields["id"]
    try:
        await storage.put(file_id, reader, length)
        record = FileRecord(**fields, bytes=reader.count, sha256=reader.digest.hexdigest())
        await file_records.insert(pool, record)
    except BaseException:
        with anyio.CancelScope(shield=True):
            try:
                await storage.delete(file_id)
            except Exception:
                logger.exception("could not remove bytes of a failed upload", extra={"id": file_id})
        raise
    logger.info("file stored", extra={"file_id": file_id, "bytes": record.bytes})
    return record
