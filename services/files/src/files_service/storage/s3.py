"""S3/MinIO storage through the ``minio`` client (blocking calls run in worker threads)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import BinaryIO, cast

import anyio.to_thread
from minio import Minio
from minio.error import S3Error

from files_service.settings import FilesSettings
from files_service.storage.base import CHUNK_SIZE, Readable

PART_SIZE = 16 * 1024 * 1024
"""Multipart part size: the client buffers one part, so this bounds memory per upload."""


class S3Storage:
    def __init__(self, client: Minio, bucket: str) -> None:
        self.client = client
        self.bucket = bucket

    @classmethod
    def from_settings(cls, settings: FilesSettings) -> S3Storage:
        endpoint, access, secret = (
            settings.s3_endpoint,
            settings.s3_access_key,
            settings.s3_secret_key,
        )
        if endpoint is None or access is None or secret is None:
            raise ValueError("storage=s3 needs an endpoint and credentials")
        client = Minio(
            endpoint,
            access_key=access.get_secret_value(),
            secret_key=secret.get_secret_value(),
            secure=settings.s3_secure,
            region=settings.s3_region,
        )
        return cls(client, settings.s3_bucket)

    async def open(self) -> None:
        # The bucket is created by the deployment (compose's one-shot job), not by the service.
        if not await anyio.to_thread.run_sync(self.client.bucket_exists, self.bucket):
            raise RuntimeError(f"S3 bucket {self.bucket!r} does not exist")

    async def put(self, key: str, source: Readable, length: int) -> None:
        def upload() -> None:
            self.client.put_object(
                self.bucket,
                key,
                cast(BinaryIO, source),  # minio only calls read(size)
                length,
                content_type="application/octet-stream",
                part_size=PART_SIZE,
            )

        await anyio.to_thread.run_sync(upload)

    async def stream(self, key: str) -> AsyncIterator[bytes]:
        response = await anyio.to_thread.run_sync(self.client.get_object, self.bucket, key)
        try:
            while chunk := await anyio.to_thread.run_sync(response.read, CHUNK_SIZE):
                yield chunk
        finally:
            response.close()
            response.release_conn()

    async def delete(self, key: str) -> None:
        await anyio.to_thread.run_sync(self.client.remove_object, self.bucket, key)

    async def exists(self, key: str) -> bool:
        try:
            await anyio.to_thread.run_sync(self.client.stat_object, self.bucket, key)
        except S3Error as error:
            if error.code in ("NoSuchKey", "NoSuchObject"):
                return False
            raise
        return True

    async def keys_older_than(self, seconds: float) -> list[str]:
        def scan() -> list[str]:
            cutoff = datetime.now(UTC) - timedelta(seconds=seconds)
            return [
                o.object_name
                for o in self.client.list_objects(self.bucket, recursive=True)
                if o.object_name and o.last_modified is not None and o.last_modified < cutoff
            ]

        return await anyio.to_thread.run_sync(scan)

    async def remove_partial(self, older_than: float) -> int:
        """Abort multipart uploads a killed process left open: their parts are stored (and
        billed) bytes that no object shows. At most one listing page (1000) per call; the
        periodic sweep takes the rest. The minio client exposes these S3 calls only as
        underscored methods."""

        def abort() -> int:
            cutoff = datetime.now(UTC) - timedelta(seconds=older_than)
            page = self.client._list_multipart_uploads(self.bucket)
            removed = 0
            for upload in page.uploads:
                started = upload.initiated_time
                if upload.upload_id and started is not None and started < cutoff:
                    self.client._abort_multipart_upload(
                        self.bucket, upload.object_name, upload.upload_id
                    )
                    removed += 1
            return removed

        return await anyio.to_thread.run_sync(abort)

    def keys(self) -> list[str]:
        """Every stored key (tests and maintenance)."""
        return sorted(o.object_name or "" for o in self.client.list_objects(self.bucket))
