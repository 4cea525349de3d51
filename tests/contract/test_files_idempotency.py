"""Idempotent uploads: an upload retried with its ``Idempotency-Key`` gets the file it recorded.

A client whose upload answer was lost (the connection cut, the service killed after the row
committed) retries with the same key and gets that file, not a second copy; the same key with
another upload is refused and stores nothing; racing uploads with one key, across two service
processes on one database, make exactly one file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import httpx
import openai
import psycopg
import pytest
from fastapi import FastAPI

from tests.support.files import (
    API_KEY,
    files_client,
    files_sdk,
    row_count,
    scratch_database,
    stored_objects,
)
from tests.support.servers import Server, free_port, serve


def key(value: str) -> dict[str, str]:
    return {"Idempotency-Key": value}


async def test_a_retry_with_the_same_key_gets_the_same_file(
    files_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with files_sdk(files_app) as sdk:
        notes = {"file": ("notes.txt", b"the same bytes"), "purpose": "user_data"}
        first = await sdk.files.create(**notes, extra_headers=key("k-1"))
        retried = await sdk.files.create(**notes, extra_headers=key("k-1"))
        assert retried == first
        other = await sdk.files.create(**notes, extra_headers=key("k-2"))
        assert other.id != first.id
        plain = await sdk.files.create(**notes)
        assert plain.id not in (first.id, other.id)  # no key: every upload is a new file
        assert (await sdk.files.content(first.id)).content == b"the same bytes"
    assert row_count(files_db) == 3 and len(stored_objects(files_storage)) == 3


async def test_the_same_key_with_another_upload_is_refused_and_stores_nothing(
    files_app: FastAPI, files_db: str, files_storage: Path
) -> None:
    async with files_sdk(files_app) as sdk:
        first = await sdk.files.create(
            file=("a.txt", b"first"), purpose="user_data", extra_headers=key("k")
        )
        for name, data, purpose in (
            ("a.txt", b"other", "user_data"),  # same size, other bytes
            ("b.txt", b"first", "user_data"),
            ("a.txt", b"first", "assistants"),
        ):
            with pytest.raises(openai.UnprocessableEntityError) as refused:
                await sdk.files.create(file=(name, data), purpose=purpose, extra_headers=key("k"))  # type: ignore[arg-type]
            assert refused.value.code == "idempotency_key_reused"
        assert [f.id async for f in sdk.files.list()] == [first.id]
    assert row_count(files_db) == 1 and len(stored_objects(files_storage)) == 1


async def test_a_key_whose_file_expired_is_refused(files_app: FastAPI, files_db: str) -> None:
    async with files_sdk(files_app) as sdk:
        first = await sdk.files.create(
            file=("a.txt", b"soon gone"), purpose="user_data", extra_headers=key("k")
        )
        with psycopg.connect(files_db, autocommit=True) as conn:
            conn.execute("UPDATE files SET expires_at = 1 WHERE id = %s", (first.id,))
        with pytest.raises(openai.UnprocessableEntityError) as refused:
            await sdk.files.create(
                file=("a.txt", b"soon gone"), purpose="user_data", extra_headers=key("k")
            )
        assert refused.value.code == "idempotency_key_expired"


async def test_a_deleted_files_key_can_name_a_new_upload(files_app: FastAPI) -> None:
    async with files_sdk(files_app) as sdk:
        first = await sdk.files.create(
            file=("a.txt", b"bytes"), purpose="user_data", extra_headers=key("k")
        )
        await sdk.files.delete(first.id)
        again = await sdk.files.create(
            file=("a.txt", b"bytes"), purpose="user_data", extra_headers=key("k")
        )
        assert again.id != first.id


@pytest.mark.parametrize("value", [b"", b"x" * 256, b"tab\there", b"\xff\xfe", b"del\x7f"])
async def test_a_malformed_key_is_a_400_and_stores_nothing(
    files_app: FastAPI, files_db: str, value: bytes
) -> None:
    async with files_sdk(files_app):
        transport = httpx.ASGITransport(app=files_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://files.test") as http:
            response = await http.post(
                "/v1/files",
                headers=[
                    (b"Authorization", f"Bearer {API_KEY}".encode()),
                    (b"Idempotency-Key", value),
                ],
                files={"file": ("a.txt", b"abc")},
                data={"purpose": "user_data"},
            )
    assert response.status_code == 400
    assert "Idempotency-Key" in response.json()["error"]["message"]
    assert row_count(files_db) == 0


@pytest.fixture
def two_services(tmp_path: Path) -> Iterator[tuple[str, list[Server], Path]]:
    """Two real files-service processes on one database and one storage folder."""
    storage = tmp_path / "storage"
    with scratch_database() as uri, ExitStack() as stack:
        servers = []
        for number in range(2):
            port = free_port()
            env = {
                "FILES_PORT": str(port),
                "FILES_POSTGRES_URI": uri,
                "FILES_STORAGE_DIR": str(storage),
                "FILES_API_KEYS": API_KEY,
                "FILES_SWEEP_INTERVAL": "0",
            }
            log = tmp_path / f"files-{number}.log"
            servers.append(
                stack.enter_context(serve(["files_service"], port=port, env=env, log=log))
            )
        yield uri, servers, storage


async def test_racing_uploads_with_one_key_make_one_file_across_two_processes(
    two_services: tuple[str, list[Server], Path],
) -> None:
    uri, servers, storage = two_services
    data = b"raced bytes " * 50_000  # 600 KB: the copies overlap in storage, not just in SQL
    clients = [files_client(f"{server.url}/v1") for server in servers]
    try:
        results = await asyncio.gather(
            *(
                clients[i % 2].files.create(
                    file=("race.bin", data), purpose="user_data", extra_headers=key("race")
                )
                for i in range(8)
            )
        )
    finally:
        for client in clients:
            await client.close()
    assert len({result.id for result in results}) == 1
    assert row_count(uri) == 1
    assert len(stored_objects(storage)) == 1  # the losers removed their own bytes
    logs = "".join(server.log.read_text() for server in servers)
    # Some uploads stored their bytes before another's row won the key (the race was run).
    assert '"raced": true' in logs or '"raced":true' in logs
    async with files_client(f"{servers[1].url}/v1") as sdk:
        assert (await sdk.files.content(results[0].id)).content == data
