"""LGOS Files service: the OpenAI Files API and vector stores, on S3/MinIO or local disk."""

from files_service.app import create_app
from files_service.settings import FilesSettings

__all__ = ["FilesSettings", "create_app"]
