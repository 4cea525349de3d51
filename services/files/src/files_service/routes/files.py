"""The OpenAI Files API: upload, list, retrieve, download, delete."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Query, Request
from service_kit import metrics
from service_kit.responses import JSONResponse
from starlette.datastructures import FormData, UploadFile
from starlette.responses import Response, StreamingResponse

from files_service import file_records, ids, uploads
from files_service.db import Pool
from files_service.deps import PoolDep, StateDep, StorageDep, require_key
from files_service.errors import (
    InvalidRequestError,
    NotFoundError,
    TooLargeError,
    UnprocessableError,
)
from files_service.file_records import FileRecord
from files_service.filenames import (
    content_disposition,
    sanitize_filename,
    served_content_type,
    stored_content_type,
)
from files_service.pagination import Order, PageRequest

logger = logging.getLogger("files_service.files")
router = APIRouter(prefix="/v1/files", tags=["files"], dependencies=[Depends(require_key)])

IDEMPOTENCY_HEADER = "idempotency-key"
PURPOSES = ("assistants", "batch", "fine-tune", "vision", "user_data", "evals")
MIN_EXPIRY, MAX_EXPIRY = 3600, 30 * 86400


def _text_field(form: FormData, name: str) -> str | None:
    value = form.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidRequestError(f"'{name}' must be a form field, not a file.", param=name)
    return value


def parse_expires_after(form: FormData, created_at: int) -> int | None:
    """``expires_after[anchor]=created_at`` and ``expires_after[seconds]`` as the SDK sends them."""
    anchor = _text_field(form, "expires_after[anchor]")
    seconds = _text_field(form, "expires_after[seconds]")
    if anchor is None and seconds is None:
        if any(key.startswith("expires_after") for key in form):
            raise InvalidRequestError(
                "expires_after must be sent as expires_after[anchor] and expires_after[seconds].",
                param="expires_after",
            )
        return None
    if anchor != "created_at":
        raise InvalidRequestError(
            "expires_after.anchor must be 'created_at'.", param="expires_after.anchor"
        )
    # isascii: str.isdigit() accepts digits such as '³' that int() refuses.
    if (
        seconds is None
        or not (seconds.isascii() and seconds.isdigit())
        or not MIN_EXPIRY <= int(seconds) <= MAX_EXPIRY
    ):
        raise InvalidRequestError(
            f"expires_after.seconds must be an integer from {MIN_EXPIRY} to {MAX_EXPIRY}.",
            param="expires_after.seconds",
        )
    return created_at + int(seconds)


def idempotency_key(request: Request) -> str | None:
    key = request.headers.get(IDEMPOTENCY_HEADER)
    if key is None:
        return None
    # Printable ASCII only: the key is stored as text and compared byte for byte.
    if not 1 <= len(key) <= 255 or not all(" " <= char <= "~" for char in key):
        raise InvalidRequestError("Idempotency-Key must be 1 to 255 printable ASCII characters.")
    return key


async def _replay(
    earlier: FileRecord, fields: dict[str, Any], upload: UploadFile, *, raced: bool
) -> Response:
    """The file an earlier upload with the same key recorded, when this is the same upload."""
    sha256, size = await uploads.digest(upload.file)
    if (earlier.purpose, earlier.filename, earlier.bytes, earlier.sha256) != (
        fields["purpose"],
        fields["filename"],
        size,
        sha256,
    ):
        raise UnprocessableError(
            "This Idempotency-Key was already used with a different upload.",
            code="idempotency_key_reused",
        )
    if not earlier.live(int(time.time())):
        raise UnprocessableError(
            "The file uploaded with this Idempotency-Key has expired.",
            code="idempotency_key_expired",
        )
    logger.info("upload replayed", extra={"file_id": earlier.id, "raced": raced})
    return JSONResponse(earlier.to_object())


async def _find(pool: Pool, file_id: str) -> FileRecord:
    record = await file_records.get(pool, file_id)
    if record is None:
        raise NotFoundError("file", file_id, "file_id")
    return record


@router.post("")
async def create_file(request: Request, state: StateDep) -> Response:
    limit = state.settings.max_upload_bytes
    key = idempotency_key(request)  # a malformed key is refused before the upload is read
    form = await request.form(max_files=1, max_fields=16)
    try:
        upload = form.get("file")
        if not isinstance(upload, UploadFile):
            raise InvalidRequestError("A file part named 'file' is required.", param="file")
        purpose = _text_field(form, "purpose")
        if purpose not in PURPOSES:
            raise InvalidRequestError(
                f"'purpose' must be one of {', '.join(PURPOSES)}.", param="purpose"
            )
        size = upload.size if upload.size is not None else 0
        if size > limit:
            raise TooLargeError(limit)
        created_at = int(time.time())
        fields: dict[str, Any] = {
            "id": ids.file_id(),
            "purpose": purpose,
            "filename": sanitize_filename(upload.filename),
            "content_type": stored_content_type(upload.content_type),
            "created_at": created_at,
            "expires_at": parse_expires_after(form, created_at),
        }
        if key is not None:
            fields["idempotency_key"] = key
            if (earlier := await file_records.by_idempotency_key(state.pool, key)) is not None:
                return await _replay(earlier, fields, upload, raced=False)
        await upload.seek(0)
        try:
            record = await uploads.store(state.pool, state.storage, upload.file, size, fields)
        except file_records.KeyTakenError:
            # A concurrent upload with the same key recorded its file first; this one's bytes
            # are already removed again.
            assert key is not None
            earlier = await file_records.by_idempotency_key(state.pool, key)
            if earlier is None:  # recorded and deleted in between: nothing to replay
                raise UnprocessableError(
                    "The file uploaded with this Idempotency-Key was deleted meanwhile.",
                    code="idempotency_key_reused",
                ) from None
            return await _replay(earlier, fields, upload, raced=True)
    finally:
        await form.close()
    if metrics.enabled():
        metrics.child(metrics.FILES_UPLOADS, purpose).inc()
        metrics.FILES_UPLOAD_BYTES.inc(size)
    return JSONResponse(record.to_object())


@router.get("")
async def list_files(
    pool: PoolDep,
    purpose: str | None = None,
    limit: Annotated[int, Query(ge=1, le=10000)] = 10000,
    order: Order = "desc",
    after: str | None = None,
) -> Response:
    page = PageRequest(limit=limit, order=order, after=after)
    return JSONResponse(await file_records.list_files(pool, page, purpose))


@router.get("/{file_id}")
async def retrieve_file(pool: PoolDep, file_id: str) -> Response:
    return JSONResponse((await _find(pool, file_id)).to_object())


@router.get("/{file_id}/content")
async def file_content(pool: PoolDep, storage: StorageDep, file_id: str) -> Response:
    record = await _find(pool, file_id)
    chunks = storage.stream(record.id)
    # Open before answering, so a missing object is a clean error rather than a cut-off body.
    first = await anext(chunks, b"")

    async def body() -> AsyncIterator[bytes]:
        if first:
            yield first
        async for chunk in chunks:
            yield chunk

    headers = {
        "Content-Length": str(record.bytes),
        "Content-Disposition": content_disposition(record.filename),
        "X-Content-Type-Options": "nosniff",
        "Content-Security-Policy": "default-src 'none'; sandbox",
        "Cache-Control": "private, no-store",
        "X-Content-SHA256": record.sha256,
    }
    return StreamingResponse(
        body(), media_type=served_content_type(record.content_type), headers=headers
    )


@router.delete("/{file_id}")
async def delete_file(state: StateDep, file_id: str) -> Response:
    if not await state.delete_file(file_id):
        raise NotFoundError("file", file_id, "file_id")
    return JSONResponse({"id": file_id, "object": "file", "deleted": True})
