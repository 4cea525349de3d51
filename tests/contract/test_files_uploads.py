"""Uploads are bounded and all-or-nothing: too large, cut off or failing leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import socket
import time
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import openai
import psycopg
import pytest
from fastapi import FastAPI
from files_service.app import create_app

from tests.support.envelopes import envelope, server_error
from tests.support.files import (
    API_KEY,
    FilesProcess,
    fail_metadata_writes,
    files_client,
    files_sdk,
    row_count,
    running,
    settings,
    stored_objects,
)


@pytest.fixture
def small_limit_app(files_db: str, files_storage: Path) -> FastAPI:
    return create_app(
        settings(postgres_uri=files_db, storage_dir=files_storage, max_upload_bytes=1000)
    )


async def test_over_the_size_limit_is_413(
    small_limit_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with running(small_limit_app) as http:
        sdk = files_client("http://files.test/v1", http)
        ok = await sdk.files.create(file=("ok.txt", b"x" * 1000), purpose="user_data")
        assert ok.bytes == 1000
        with pytest.raises(openai.APIStatusError) as error:
            await sdk.files.create(file=("big.txt", b"x" * 1001), purpose="user_data")
        assert error.value.status_code == 413
        too_large = "The file exceeds the maximum upload size of 1000 bytes."
        assert error.value.body == envelope(
            too_large, "invalid_request_error", "file", "file_too_large"
        )
        # Far over the limit is refused from Content-Length before the body is read.
        with pytest.raises(openai.APIStatusError) as error:
            await sdk.files.create(file=("huge.txt", b"x" * 200_000), purpose="user_data")
        assert error.value.status_code == 413

        # A chunked body (no Content-Length) is cut off as it arrives.
        async def chunked() -> AsyncIterator[bytes]:
            yield b'--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n'
            yield b'--b\r\nContent-Disposition: form-data; name="file"; filename="c.txt"\r\n\r\n'
            for _ in range(100):
                yield b"y" * 1000
            yield b"\r\n--b--\r\n"

        response = await http.post(
            "/v1/files",
            content=chunked(),
            headers={
                "Authorization": f"Bearer {API_KEY}",
                "Content-Type": "multipart/form-data; boundary=b",
            },
        )
        assert response.status_code == 413
        assert response.json()["error"]["code"] == "file_too_large"
    assert row_count(files_db) == 1
    assert [p.name for p in stored_objects(files_storage)] == [ok.id]


async def test_interrupted_upload_leaves_no_row_and_no_object(
    files_process: FilesProcess,
) -> None:
    before_rows = row_count(files_process.postgres_uri)
    before_objects = stored_objects(files_process.storage_dir)
    port = int(files_process.server.url.rsplit(":", 1)[1])
    head = (
        b'--b\r\nContent-Disposition: form-data; name="purpose"\r\n\r\nuser_data\r\n'
        b'--b\r\nContent-Disposition: form-data; name="file"; filename="cut.txt"\r\n\r\n'
    )
    declared = len(head) + 3_000_000
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(
            b"POST /v1/files HTTP/1.1\r\nHost: files\r\n"
            + f"Authorization: Bearer {API_KEY}\r\n".encode()
            + b"Content-Type: multipart/form-data; boundary=b\r\n"
            + f"Content-Length: {declared}\r\n\r\n".encode()
            + head
            + b"z" * 1_500_000
        )
    # The server notices the disconnect; give it a moment, then nothing must have been kept.
    await asyncio.sleep(1.0)
    assert row_count(files_process.postgres_uri) == before_rows
    assert stored_objects(files_process.storage_dir) == before_objects
    async with files_client(f"{files_process.server.url}/v1") as sdk:  # still serving
        await sdk.files.list(limit=1)


async def test_failed_metadata_write_removes_the_stored_bytes(
    files_app: FastAPI, files_db: str, files_storage: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_metadata_writes(monkeypatch, "connection lost: secret-detail")
    async with files_sdk(files_app) as sdk:
        with pytest.raises(openai.InternalServerError) as error:
            await sdk.files.create(file=("a.txt", b"abc"), purpose="user_data")
    # A lost database connection is an outage: retryable 503, no detail.
    assert error.value.status_code == 503
    assert error.value.body == server_error(
        "The file database is unavailable; retry shortly.", "service_unavailable"
    )
    assert "secret-detail" not in str(error.value.response.text)
    assert (row_count(files_db), stored_objects(files_storage)) == (0, [])  # nothing kept


async def test_failed_storage_write_leaves_no_row(
    files_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with running(files_app) as http:
        storage = files_app.state.files.storage

        async def broken_put(*args: object) -> None:
            raise OSError("disk full")

        storage.put = broken_put
        sdk = files_client("http://files.test/v1", http)
        with pytest.raises(openai.InternalServerError):
            await sdk.files.create(file=("a.txt", b"abc"), purpose="user_data")
    assert (row_count(files_db), stored_objects(files_storage)) == (0, [])  # nothing kept


async def test_delete_removes_row_and_bytes(
    files_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with files_sdk(files_app) as sdk:
        uploaded = await sdk.files.create(file=("a.txt", b"abc"), purpose="user_data")
        assert row_count(files_db) == 1 and len(stored_objects(files_storage)) == 1
        await sdk.files.delete(uploaded.id)
    assert (row_count(files_db), stored_objects(files_storage)) == (0, [])  # nothing kept


async def test_bytes_that_cannot_be_removed_are_left_to_the_orphan_sweep(
    files_db: str, files_storage: Path
) -> None:
    """The row goes first: the file is gone for the client at once, and its bytes, if they
    cannot be removed now, are an orphan the sweep removes, never a row without bytes."""
    app = create_app(
        settings(
            postgres_uri=files_db, storage_dir=files_storage, orphan_grace=60, sweep_interval=0
        )
    )
    async with files_sdk(app) as sdk:
        uploaded = await sdk.files.create(file=("a.txt", b"abc"), purpose="user_data")
        storage = app.state.files.storage
        real_delete = storage.delete

        async def broken_delete(key: str) -> None:
            raise OSError("read-only file system")

        storage.delete = broken_delete
        assert (await sdk.files.delete(uploaded.id)).deleted
        with pytest.raises(openai.NotFoundError):
            await sdk.files.retrieve(uploaded.id)
        with pytest.raises(openai.NotFoundError):
            await sdk.files.content(uploaded.id)
        assert row_count(files_db) == 0 and len(stored_objects(files_storage)) == 1
        storage.delete = real_delete
        stale = time.time() - 120  # an old file's bytes are past the grace at once
        for path in stored_objects(files_storage):
            os.utime(path, (stale, stale))
        assert await app.state.files.sweep_orphans() == 1
    assert stored_objects(files_storage) == []


async def test_large_upload_streams_and_round_trips(
    files_app: FastAPI, files_storage: Path
) -> None:
    data = bytes(range(256)) * (12 * 4096)  # 12 MiB, several storage chunks
    async with running(files_app) as http:
        sdk = files_client("http://files.test/v1", http)
        uploaded = await sdk.files.create(file=("blob.bin", data), purpose="assistants")
        assert uploaded.bytes == len(data)
        async with http.stream(
            "GET",
            f"/v1/files/{uploaded.id}/content",
            headers={"Authorization": f"Bearer {API_KEY}"},
        ) as response:
            assert response.headers["content-length"] == str(len(data))
            assert response.headers["content-type"] == "application/octet-stream"
            received = b"".join([chunk async for chunk in response.aiter_raw()])
    assert received == data


async def test_expired_files_disappear_and_are_swept(
    files_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with files_sdk(files_app) as sdk:
        uploaded = await sdk.files.create(
            file=("a.txt", b"expiring knowledge"),
            purpose="assistants",
            expires_after={"anchor": "created_at", "seconds": 3600},
        )
        store = await sdk.vector_stores.create(name="kb", file_ids=[uploaded.id])
        await sdk.vector_stores.files.poll(
            uploaded.id, vector_store_id=store.id, poll_interval_ms=50
        )
        assert (await sdk.vector_stores.search(store.id, query="knowledge")).data
        with psycopg.connect(files_db, autocommit=True) as conn:
            conn.execute("UPDATE files SET expires_at = 1 WHERE id = %s", (uploaded.id,))
        with pytest.raises(openai.NotFoundError):
            await sdk.files.retrieve(uploaded.id)
        assert [f async for f in sdk.files.list()] == []
        assert (await sdk.vector_stores.search(store.id, query="knowledge")).data == []
        assert await files_app.state.files.sweep_expired() == 1
    assert row_count(files_db) == 0 and stored_objects(files_storage) == []


async def test_one_undeletable_expired_file_does_not_stall_the_sweep(
    files_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with files_sdk(files_app) as sdk:
        stuck = await sdk.files.create(file=("a.txt", b"a"), purpose="user_data")
        other = await sdk.files.create(file=("b.txt", b"b"), purpose="user_data")
        with psycopg.connect(files_db, autocommit=True) as conn:
            conn.execute("UPDATE files SET expires_at = 1 WHERE id = %s", (stuck.id,))
            conn.execute("UPDATE files SET expires_at = 2 WHERE id = %s", (other.id,))
        storage = files_app.state.files.storage
        real_delete = storage.delete

        async def delete_all_but_stuck(key: str) -> None:
            if key == stuck.id:
                raise OSError("read-only file system")
            await real_delete(key)

        storage.delete = delete_all_but_stuck
        # Both rows go; the stuck file's bytes stay behind for the orphan sweep.
        assert await files_app.state.files.sweep_expired() == 2
    assert row_count(files_db) == 0 and len(stored_objects(files_storage)) == 1


async def test_over_the_limit_over_a_real_socket(files_process: FilesProcess) -> None:
    """The SDK reads the 413 envelope, also when the server refuses before reading the body."""
    limit = 8 * 1024 * 1024  # FILES_MAX_UPLOAD_BYTES of the files_process fixture
    async with files_client(f"{files_process.server.url}/v1") as sdk:
        for size in (limit + 1, 5 * limit):
            with pytest.raises(openai.APIStatusError) as error:
                await sdk.files.create(file=("big.bin", b"x" * size), purpose="assistants")
            assert error.value.status_code == 413
            assert error.value.code == "file_too_large"


async def test_other_routes_refuse_large_and_malformed_bodies(files_process: FilesProcess) -> None:
    """Only uploads may be large; a JSON body over 1 MiB is refused before it is read."""
    headers = {"Authorization": f"Bearer {API_KEY}", "Content-Type": "application/json"}
    url = f"{files_process.server.url}/v1/vector_stores"
    async with httpx.AsyncClient(headers=headers) as http:
        big = await http.post(url, content=b'{"name": "' + b"x" * (2 * 1024 * 1024) + b'"}')
        assert big.status_code == 413
        assert big.json()["error"]["code"] == "request_too_large"

        async def chunked() -> AsyncIterator[bytes]:  # no Content-Length: counted as it arrives
            yield b'{"name": "'
            for _ in range(40):
                yield b"x" * 65536
            yield b'"}'

        streamed = await http.post(url, content=chunked())
        assert streamed.status_code == 413
        assert streamed.json()["error"]["code"] == "request_too_large"
        broken = await http.post(url, content=b'{"name": ')
        assert broken.status_code == 400
        assert broken.json()["error"] == envelope(
            "The request body is not valid JSON.", "invalid_request_error", None, None
        )


async def test_orphan_sweep_removes_only_stale_bytes_without_a_row(
    files_db: str, files_storage: Path
) -> None:
    """What a process killed mid-upload leaves: an unfinished part, or stored bytes whose row was
    never written. The sweep removes those once older than the grace, and nothing else."""
    app = create_app(settings(postgres_uri=files_db, storage_dir=files_storage, orphan_grace=60))
    async with files_sdk(app) as sdk:
        kept = await sdk.files.create(file=("kept.txt", b"recorded"), purpose="user_data")
        incoming = files_storage / ".incoming"
        old_part, young_part = incoming / "dead.part", incoming / "writing.part"
        old_orphan = files_storage / "ab" / "file-orphanab"
        young_orphan = files_storage / "cd" / "file-recordingcd"  # its row may be on its way
        for path in (old_part, young_part, old_orphan, young_orphan):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(b"bytes")
        stale = time.time() - 120
        for path in (old_part, old_orphan, *stored_objects(files_storage / kept.id[-2:])):
            os.utime(path, (stale, stale))
        assert await app.state.files.sweep_orphans() == 2
        assert sorted(stored_objects(files_storage)) == sorted(
            [young_part, young_orphan, files_storage / kept.id[-2:] / kept.id]
        )
        assert (await sdk.files.content(kept.id)).content == b"recorded"
