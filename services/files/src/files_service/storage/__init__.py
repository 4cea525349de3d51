"""Where file bytes live: a small async interface with a local-disk and an S3 implementation."""

from __future__ import annotations

from files_service.settings import FilesSettings
from files_service.storage.base import CHUNK_SIZE, Readable, Storage

__all__ = ["CHUNK_SIZE", "Readable", "Storage", "create_storage"]


def create_storage(settings: FilesSettings) -> Storage:
    if settings.storage == "s3":
        from files_service.storage.s3 import S3Storage

        return S3Storage.from_settings(settings)
    from files_service.storage.disk import DiskStorage

    return DiskStorage(settings.storage_dir)
