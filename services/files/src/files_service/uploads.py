"""Streaming uploads: a body-size guard, hashing while copying, and the all-or-nothing store.

The multipart parser spools the file part to a temporary file (at most 1 MiB in memory); the bytes
are then copied to storage in 1 MiB reads while their sha256 is computed, so memory stays flat
whatever the file size. The row is written only after the bytes are stored, and the bytes are
removed again if the row cannot be written: no failure leaves one without the other.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any, BinaryIO

import anyio
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from files_service import file_records
from files_service.db import Pool
from files_service.errors import BodyTooLargeError, FilesError, TooLargeError, error_response
from files_service.file_records import FileRecord
from files_service.storage import Readable, Storage
from files_service.storage.base import CHUNK_SIZE

logger = logging.getLogger("files_service.uploads")

MULTIPART_OVERHEAD = 64 * 1024
"""Room for boundaries and the small form fields around the file part."""

MAX_JSON_BODY = 1024 * 1024
"""Every other route takes a small JSON body; anything larger is refused, not read into memory."""


class BodyLimit:
    """Refuse bodies over the limit: at once by Content-Length, or as the bytes arrive.

    ``POST /v1/files`` may carry up to the upload limit; every other request ``MAX_JSON_BODY``.
    """

    def __init__(self, app: ASGIApp, max_upload_bytes: int, upload_path: str = "/v1/files") -> None:
        self.app = app
        self.max_upload_bytes = max_upload_bytes
        self.upload_path = upload_path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        error: FilesError
        if scope["method"] == "POST" and scope["path"] == self.upload_path:
            allowed = self.max_upload_bytes + MULTIPART_OVERHEAD
            error = TooLargeError(self.max_upload_bytes)
        else:
            allowed = MAX_JSON_BODY
            error = BodyTooLargeError(MAX_JSON_BODY)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > allowed:
            await error_response(error)(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > allowed:
                    raise error
            return message

        await self.app(scope, counted, send)


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
