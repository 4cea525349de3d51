"""The Files API through the LiteLLM gateway, stored by the real Files service behind it.

Clients hold only the gateway key; the gateway holds the Files service's key. Every operation a
UI needs (upload, list, retrieve, download, delete) must reach the Files service intact.
"""

from __future__ import annotations

import hashlib
import uuid

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.files import FilesProcess, files_client
from tests.support.servers import Server


async def test_upload_list_download_delete_through_the_gateway(
    gateway: AsyncOpenAI, files_process: FilesProcess
) -> None:
    payload = b"Release notes: the approval graph now asks once per change.\n" * 200
    uploaded = await gateway.files.create(file=("notes.md", payload), purpose="assistants")
    assert uploaded.id.startswith("file-")
    assert uploaded.bytes == len(payload)
    assert uploaded.filename == "notes.md"

    # The Files service itself holds it: same id, same bytes, seen with the service's own key.
    async with files_client(f"{files_process.server.url}/v1") as direct:
        stored = await direct.files.retrieve(uploaded.id)
        assert stored.bytes == len(payload)

    listed = [f.id async for f in gateway.files.list(purpose="assistants")]
    assert uploaded.id in listed
    retrieved = await gateway.files.retrieve(uploaded.id)
    assert retrieved.filename == "notes.md"
    content = await gateway.files.content(uploaded.id)
    assert hashlib.sha256(content.read()).digest() == hashlib.sha256(payload).digest()

    deleted = await gateway.files.delete(uploaded.id)
    assert deleted.deleted is True
    async with files_client(f"{files_process.server.url}/v1") as direct:
        with pytest.raises(openai.NotFoundError):
            await direct.files.retrieve(uploaded.id)


async def test_files_need_the_gateway_key(litellm_gateway: Server) -> None:
    async with sdk_client(f"{litellm_gateway.url}/v1", api_key="sk-wrong") as wrong:
        with pytest.raises(openai.AuthenticationError):
            await wrong.files.create(file=("x.txt", b"x"), purpose="assistants")
        with pytest.raises(openai.AuthenticationError):
            await wrong.files.list()


async def test_an_upload_retried_with_its_idempotency_key_is_one_file(
    gateway: AsyncOpenAI, files_process: FilesProcess
) -> None:
    """The key reaches the Files service through the gateway: the retry gets the same file."""
    key = {"Idempotency-Key": f"gateway-retry-{uuid.uuid4().hex}"}
    payload = b"uploaded once, answered twice\n"
    first = await gateway.files.create(
        file=("once.txt", payload), purpose="assistants", extra_headers=key
    )
    retried = await gateway.files.create(
        file=("once.txt", payload), purpose="assistants", extra_headers=key
    )
    assert retried.id == first.id
    async with files_client(f"{files_process.server.url}/v1") as direct:
        named = [
            f async for f in direct.files.list(purpose="assistants") if f.filename == "once.txt"
        ]
        assert [f.id for f in named] == [first.id]
        await direct.files.delete(first.id)
