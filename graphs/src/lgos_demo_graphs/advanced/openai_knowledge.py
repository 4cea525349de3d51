"""``Knowledge`` and ``FileReader`` over OpenAI-compatible Files and vector-store endpoints.

The official SDK runs with ``max_retries=0``: whether a failed upload may be repeated is the
graph's decision (its receipt), never a transport library's.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Literal

import openai
from openai import AsyncOpenAI

from lgos_demo_graphs.advanced.knowledge import (
    IndexStatus,
    KnowledgeHit,
    KnowledgeUnavailableError,
    StoredFile,
)
from lgos_demo_graphs.advanced.knowledge_spans import (
    FILE_ID,
    client_span,
    record_documents,
    retrieval_span,
)
from lgos_demo_graphs.advanced.settings import KnowledgeSettings
from lgos_demo_graphs.model import traced_async_client

NOTE_PURPOSE: Literal["assistants"] = "assistants"
_POLL_SECONDS = 0.25


@asynccontextmanager
async def _translated() -> AsyncIterator[None]:
    """Transport failures and server errors become ``KnowledgeUnavailableError``; a 4xx is a
    real answer (a bug or bad configuration) and stays what it is."""
    try:
        yield
    except (openai.APIConnectionError, openai.InternalServerError) as exc:
        raise KnowledgeUnavailableError(f"knowledge service unavailable: {exc}") from exc


def _client(base_url: str, api_key: str | None, timeout: float) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "no-key",
        max_retries=0,
        timeout=timeout,
        http_client=traced_async_client(),
    )


def _secret(value: object) -> str | None:
    getter = getattr(value, "get_secret_value", None)
    return getter() if getter is not None else None


class OpenAIFileReader:
    def __init__(self, settings: KnowledgeSettings) -> None:
        self.files_url = settings.files_base_url
        self.files = _client(
            settings.files_base_url, _secret(settings.files_api_key), settings.files_timeout
        )

    async def read(self, file_id: str, max_bytes: int) -> StoredFile:
        with client_span("files.read", self.files_url, **{FILE_ID: file_id}):
            async with _translated():
                meta = await self.files.files.retrieve(file_id)
                if meta.bytes > max_bytes:  # named as too large, never downloaded
                    return StoredFile(file_id, meta.filename, meta.bytes, None)
                content = await self.files.files.content(file_id)
        data = content.content
        if len(data) > max_bytes:  # the metadata understated it
            return StoredFile(file_id, meta.filename, len(data), None)
        return StoredFile(file_id, meta.filename, len(data), data)


class OpenAIKnowledge:
    """Notes are Files (purpose ``assistants``) attached to one vector store."""

    def __init__(self, settings: KnowledgeSettings, vector_store_id: str) -> None:
        self.vector_store_id = vector_store_id
        self.files_url = settings.files_base_url
        self.store_url = settings.store_base_url
        self.files = _client(
            settings.files_base_url, _secret(settings.files_api_key), settings.files_timeout
        )
        self.stores = _client(
            settings.store_base_url, _secret(settings.store_api_key), settings.files_timeout
        )

    async def search(self, query: str, limit: int) -> list[KnowledgeHit]:
        with retrieval_span(self.store_url, self.vector_store_id, limit, query) as span:
            async with _translated():
                page = await self.stores.vector_stores.search(
                    self.vector_store_id, query=query, max_num_results=limit
                )
            hits = [
                KnowledgeHit(
                    hit.file_id,
                    hit.filename,
                    " ".join(part.text for part in hit.content if part.type == "text"),
                    hit.score,
                )
                for hit in page.data
            ]
            record_documents(span, hits)
        return hits

    async def find_upload(self, filename: str, digest: str) -> str | None:
        with client_span("files.find_upload", self.files_url) as span:
            async with _translated():
                async for file in self.files.files.list(purpose=NOTE_PURPOSE, order="desc"):
                    if file.filename != filename:
                        continue
                    content = await self.files.files.content(file.id)
                    if hashlib.sha256(content.content).hexdigest() == digest:
                        span.set_attribute(FILE_ID, file.id)
                        return file.id
        return None

    async def upload(self, filename: str, content: bytes) -> str:
        with client_span("files.upload", self.files_url) as span:
            async with _translated():
                created = await self.files.files.create(
                    file=(filename, content, "text/markdown"), purpose=NOTE_PURPOSE
                )
            span.set_attribute(FILE_ID, created.id)
        return created.id

    async def index(self, file_id: str, wait_seconds: float) -> IndexStatus:
        deadline = time.monotonic() + wait_seconds
        with client_span("vector_stores.index", self.store_url, **{FILE_ID: file_id}) as span:
            async with _translated():
                attached = await self.stores.vector_stores.files.create(
                    vector_store_id=self.vector_store_id, file_id=file_id
                )
                while attached.status == "in_progress" and time.monotonic() < deadline:
                    await asyncio.sleep(_POLL_SECONDS)
                    attached = await self.stores.vector_stores.files.retrieve(
                        file_id, vector_store_id=self.vector_store_id
                    )
            span.set_attribute("lgos.index.status", attached.status)
        if attached.status == "completed":
            return "completed"
        return "in_progress" if attached.status == "in_progress" else "failed"
