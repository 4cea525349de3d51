"""Vector stores through the official SDK: create, attach and poll, search, detach, errors."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from typing import Any

import openai
import psycopg
import pytest
from fastapi import FastAPI
from files_service.app import create_app
from files_service.search.embeddings import EmbeddingsClient
from openai import AsyncOpenAI

from tests.support.envelopes import envelope
from tests.support.files import attach, files_client, files_sdk, indexing_error, running, settings

NOTES = {
    "idempotency.md": "Retries need idempotency keys so a repeated payment is applied once.",
    "gardening.md": "Tomatoes want full sun, deep watering and a stake to climb.",
    "postgres.md": "PostgreSQL vacuum reclaims space from dead tuples after updates.",
}


async def upload_and_attach(sdk: AsyncOpenAI, store_id: str, name: str, text: str) -> str:
    attached = await attach(sdk, store_id, name, text.encode())
    assert attached.status == "completed", attached.last_error
    return attached.id


async def test_store_lifecycle_and_search(files: AsyncOpenAI) -> None:
    store = await files.vector_stores.create(name="kb", metadata={"team": "docs"})
    assert store.id.startswith("vs_") and store.object == "vector_store"
    assert (store.name, store.metadata, store.status) == ("kb", {"team": "docs"}, "completed")
    assert store.file_counts.total == 0

    ids = {
        name: await upload_and_attach(files, store.id, name, text) for name, text in NOTES.items()
    }

    attached = await files.vector_stores.files.retrieve(
        ids["gardening.md"], vector_store_id=store.id
    )
    assert attached.object == "vector_store.file" and attached.vector_store_id == store.id
    assert attached.usage_bytes == len(NOTES["gardening.md"].encode())
    assert attached.chunking_strategy is not None and attached.chunking_strategy.type == "static"

    fetched = await files.vector_stores.retrieve(store.id)
    assert fetched.file_counts.completed == 3 and fetched.file_counts.total == 3
    assert fetched.usage_bytes == sum(len(t.encode()) for t in NOTES.values())

    page = await files.vector_stores.search(
        store.id, query="why do retries need idempotency keys?", max_num_results=2
    )
    results = page.data
    assert results[0].file_id == ids["idempotency.md"]
    assert results[0].filename == "idempotency.md"
    assert results[0].content[0].type == "text"
    assert "idempotency keys" in results[0].content[0].text
    assert 0 < results[0].score <= 1
    assert len(results) <= 2

    nothing = await files.vector_stores.search(store.id, query="quantum chromodynamics")
    assert nothing.data == []

    detached = await files.vector_stores.files.delete(ids["postgres.md"], vector_store_id=store.id)
    assert (detached.id, detached.deleted, detached.object) == (
        ids["postgres.md"],
        True,
        "vector_store.file.deleted",
    )
    after = await files.vector_stores.search(store.id, query="vacuum dead tuples")
    assert after.data == []
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.files.retrieve(ids["postgres.md"], vector_store_id=store.id)
    await files.files.retrieve(ids["postgres.md"])  # detaching keeps the file itself

    # Deleting the file itself removes it from every store.
    await files.files.delete(ids["gardening.md"])
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.files.retrieve(ids["gardening.md"], vector_store_id=store.id)
    assert (await files.vector_stores.retrieve(store.id)).file_counts.total == 1

    gone = await files.vector_stores.delete(store.id)
    assert (gone.id, gone.deleted, gone.object) == (store.id, True, "vector_store.deleted")
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.retrieve(store.id)


async def test_store_created_with_files_and_list_pagination(asgi_files: AsyncOpenAI) -> None:
    uploaded = await asgi_files.files.create(file=("a.txt", b"alpha beta"), purpose="assistants")
    stores = [
        await asgi_files.vector_stores.create(
            name=f"s{i}", file_ids=[uploaded.id] if i == 0 else []
        )
        for i in range(3)
    ]
    listed = [s.id async for s in asgi_files.vector_stores.list(limit=2, order="asc")]
    assert listed == [s.id for s in stores]
    first = await asgi_files.vector_stores.list(limit=1)
    assert first.data[0].id == stores[-1].id and first.has_more

    for _ in range(100):
        files_page = await asgi_files.vector_stores.files.list(stores[0].id)
        if files_page.data and files_page.data[0].status != "in_progress":
            break
        await asyncio.sleep(0.05)
    assert [f.id for f in files_page.data] == [uploaded.id]
    assert files_page.data[0].status == "completed"
    completed = await asgi_files.vector_stores.files.list(stores[0].id, filter="completed")
    assert len(completed.data) == 1
    failed = await asgi_files.vector_stores.files.list(stores[0].id, filter="failed")
    assert failed.data == []


async def test_many_files_paginate_within_a_store(asgi_files: AsyncOpenAI) -> None:
    store = await asgi_files.vector_stores.create(name="many")
    ids = []
    for i in range(5):
        uploaded = await asgi_files.files.create(file=(f"{i}.txt", b"x y z"), purpose="assistants")
        await asgi_files.vector_stores.files.create(vector_store_id=store.id, file_id=uploaded.id)
        ids.append(uploaded.id)
    listed = [
        f.id async for f in asgi_files.vector_stores.files.list(store.id, limit=2, order="asc")
    ]
    assert listed == ids
    page = await asgi_files.vector_stores.files.list(store.id, after=ids[1], order="asc")
    assert [f.id for f in page.data] == ids[2:]
    # `before` is the previous page: the rows right before the cursor, still in `order`.
    back = await asgi_files.vector_stores.files.list(store.id, before=ids[3], limit=2, order="asc")
    assert [f.id for f in back.data] == ids[1:3] and back.has_more
    back = await asgi_files.vector_stores.files.list(store.id, before=ids[1], limit=2, order="desc")
    assert [f.id for f in back.data] == [ids[3], ids[2]] and back.has_more
    stores = await asgi_files.vector_stores.list(before=store.id, limit=1)
    assert stores.data == [] and not stores.has_more


async def test_binary_files_fail_indexing_clearly(files: AsyncOpenAI) -> None:
    store = await files.vector_stores.create(name="bin")
    attached = await attach(files, store.id, "x.bin", b"\x00\x01\x02" * 100)
    failure = indexing_error(attached)
    assert failure.code == "unsupported_file"
    counts = (await files.vector_stores.retrieve(store.id)).file_counts
    assert (counts.failed, counts.completed) == (1, 0)


async def test_reattaching_is_idempotent(asgi_files: AsyncOpenAI) -> None:
    store = await asgi_files.vector_stores.create(name="again")
    uploaded = await asgi_files.files.create(file=("a.txt", b"alpha"), purpose="assistants")
    first = await asgi_files.vector_stores.files.create_and_poll(
        file_id=uploaded.id, vector_store_id=store.id, poll_interval_ms=50
    )
    second = await asgi_files.vector_stores.files.create(
        file_id=uploaded.id, vector_store_id=store.id
    )
    assert second.status == first.status == "completed"
    assert (await asgi_files.vector_stores.retrieve(store.id)).file_counts.total == 1


async def test_errors_are_openai_envelopes(files: AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as error:
        await files.vector_stores.retrieve("vs_missing")
    assert error.value.body == envelope(
        "No such vector store: 'vs_missing'.",
        "invalid_request_error",
        "vector_store_id",
        "not_found",
    )
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.search("vs_missing", query="x")
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.delete("vs_missing")

    store = await files.vector_stores.create(name="errors")
    with pytest.raises(openai.NotFoundError) as error:
        await files.vector_stores.files.create(vector_store_id=store.id, file_id="file-nope")
    assert error.value.param == "file_id"
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.files.retrieve("file-nope", vector_store_id=store.id)
    with pytest.raises(openai.NotFoundError):
        await files.vector_stores.files.delete("file-nope", vector_store_id=store.id)

    uploaded = await files.files.create(file=("a.txt", b"x"), purpose="assistants")
    with pytest.raises(openai.BadRequestError) as error:
        await files.vector_stores.files.create(
            vector_store_id=store.id,
            file_id=uploaded.id,
            chunking_strategy={
                "type": "static",
                "static": {"max_chunk_size_tokens": 50, "chunk_overlap_tokens": 10},
            },
        )
    assert error.value.param == "chunking_strategy.static.max_chunk_size_tokens"
    with pytest.raises(openai.BadRequestError) as error:
        await files.vector_stores.search(store.id, query="x", max_num_results=0)
    assert error.value.param == "max_num_results"
    with pytest.raises(openai.BadRequestError) as error:
        await files.vector_stores.search(store.id, query="   ")
    assert error.value.param == "query"
    with pytest.raises(openai.BadRequestError) as error:
        await files.vector_stores.search(
            store.id, query="x", filters={"type": "eq", "key": "a", "value": "b"}
        )
    assert error.value.code == "unsupported_parameter"
    with pytest.raises(openai.BadRequestError) as error:
        await files.vector_stores.search(store.id, query="word " * 1000)
    assert error.value.param == "query"


async def test_an_expired_store_is_readable_but_not_usable(
    files_app: FastAPI, files_db: str
) -> None:
    async with files_sdk(files_app) as sdk:
        store = await sdk.vector_stores.create(
            name="old", expires_after={"anchor": "last_active_at", "days": 1}
        )
        await upload_and_attach(sdk, store.id, "a.md", NOTES["gardening.md"])
        with psycopg.connect(files_db, autocommit=True) as conn:
            conn.execute(
                "UPDATE vector_stores SET last_active_at = last_active_at - 2 * 86400 "
                "WHERE id = %s",
                (store.id,),
            )
        assert (await sdk.vector_stores.retrieve(store.id)).status == "expired"
        uploaded = await sdk.files.create(file=("b.md", b"more"), purpose="assistants")
        for attempt in (
            sdk.vector_stores.search(store.id, query="tomatoes"),
            sdk.vector_stores.files.create(vector_store_id=store.id, file_id=uploaded.id),
        ):
            with pytest.raises(openai.BadRequestError) as error:
                await attempt
            assert error.value.code == "vector_store_expired"
        # Refused use does not renew the store.
        assert (await sdk.vector_stores.retrieve(store.id)).status == "expired"
        assert (await sdk.vector_stores.delete(store.id)).deleted


async def test_indexing_is_bounded_in_time(files_db: str, files_storage: Path) -> None:
    """An embeddings endpoint that never answers fails the file instead of leaving it pending."""

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()  # accepts connections (backlog) and never answers
        slow = settings(embeddings_url=f"http://127.0.0.1:{silent.getsockname()[1]}/v1")
        app = create_app(
            settings(postgres_uri=files_db, storage_dir=files_storage, indexing_timeout=1.0)
        )
        async with running(app) as http:
            # This server has no pgvector, so the slow client is wired in after start-up.
            app.state.files.indexer.embeddings = EmbeddingsClient(slow)
            sdk = files_client("http://files.test/v1", http)
            store = await sdk.vector_stores.create(name="slow")
            uploaded = await sdk.files.create(file=("a.txt", b"some words"), purpose="assistants")
            attached = await sdk.vector_stores.files.create(
                vector_store_id=store.id, file_id=uploaded.id
            )
            assert attached.status == "in_progress"
            assert (await sdk.vector_stores.retrieve(store.id)).status == "in_progress"
            done = await sdk.vector_stores.files.poll(
                uploaded.id, vector_store_id=store.id, poll_interval_ms=100
            )
            assert done.status == "failed"
            assert done.last_error is not None and done.last_error.code == "server_error"
            assert "in time" in done.last_error.message


async def test_attach_racing_a_file_delete_is_a_404(files_app: FastAPI) -> None:
    """The file exists when checked but is gone when attached: a clean 404, not a 500."""
    from files_service import file_records

    async with files_sdk(files_app) as sdk:
        store = await sdk.vector_stores.create(name="race")
        uploaded = await sdk.files.create(file=("a.txt", b"x"), purpose="assistants")
        real_get = file_records.get

        async def get_then_delete(pool: Any, file_id: str) -> Any:
            record = await real_get(pool, file_id)
            await files_app.state.files.delete_file(file_id)
            return record

        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(file_records, "get", get_then_delete)
            with pytest.raises(openai.NotFoundError) as error:
                await sdk.vector_stores.files.create(vector_store_id=store.id, file_id=uploaded.id)
        assert error.value.param == "file_id"


async def test_files_over_the_index_limit_fail_clearly(files_db: str, files_storage: Path) -> None:
    app = create_app(settings(postgres_uri=files_db, storage_dir=files_storage, max_index_bytes=10))
    async with files_sdk(app) as sdk:
        store = await sdk.vector_stores.create(name="limit")
        attached = await attach(sdk, store.id, "a.txt", b"eleven bytes")
        failure = indexing_error(attached)
        assert failure.code == "unsupported_file"
        assert "over 10 bytes" in failure.message
