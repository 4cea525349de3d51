"""The S3 storage backend against a real S3-compatible server process (moto_server)."""

from __future__ import annotations

import asyncio
import io
import uuid
from typing import Any

import openai
import psycopg
import pytest
from fastapi import FastAPI
from files_service.app import create_app
from minio import Minio
from minio.error import S3Error

from tests.support.files import (
    attach,
    create_bucket,
    fail_metadata_writes,
    files_sdk,
    running,
    settings,
)
from tests.support.servers import Server


@pytest.fixture
def bucket(moto_s3: Server) -> str:
    name = f"files-{uuid.uuid4().hex[:10]}"
    create_bucket(moto_s3, name)
    return name


@pytest.fixture
def s3(moto_s3: Server) -> Minio:
    return Minio(moto_s3.url.removeprefix("http://"), "test", "test-secret", secure=False)


def s3_settings(moto_s3: Server, bucket: str, files_db: str) -> Any:
    return settings(
        postgres_uri=files_db,
        storage="s3",
        s3_endpoint=moto_s3.url.removeprefix("http://"),
        s3_access_key="test",
        s3_secret_key="test-secret",
        s3_bucket=bucket,
    )


@pytest.fixture
def s3_app(moto_s3: Server, bucket: str, files_db: str) -> FastAPI:
    return create_app(s3_settings(moto_s3, bucket, files_db))


def objects(s3: Minio, bucket: str) -> list[str]:
    return sorted(o.object_name or "" for o in s3.list_objects(bucket, recursive=True))


async def test_round_trip_and_delete_through_s3(s3_app: FastAPI, s3: Minio, bucket: str) -> None:
    data = b"stored in S3\n" * 1000
    async with files_sdk(s3_app) as sdk:
        uploaded = await sdk.files.create(file=("s3.txt", data), purpose="user_data")
        assert objects(s3, bucket) == [uploaded.id]
        assert s3.get_object(bucket, uploaded.id).read() == data
        content = await sdk.files.content(uploaded.id)
        assert content.content == data
        assert content.response.headers["content-length"] == str(len(data))
        await sdk.files.delete(uploaded.id)
        assert objects(s3, bucket) == []
        with pytest.raises(S3Error):
            s3.stat_object(bucket, uploaded.id)


async def test_multipart_sized_upload(s3_app: FastAPI, s3: Minio, bucket: str) -> None:
    data = bytes(range(256)) * (4096 * 20)  # 20 MiB: more than one 16 MiB part
    async with files_sdk(s3_app) as sdk:
        uploaded = await sdk.files.create(file=("big.bin", data), purpose="assistants")
        assert s3.stat_object(bucket, uploaded.id).size == len(data)
        assert (await sdk.files.content(uploaded.id)).content == data


async def test_failed_metadata_write_leaves_no_object(
    s3_app: FastAPI, s3: Minio, bucket: str, files_db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    fail_metadata_writes(monkeypatch)
    async with files_sdk(s3_app) as sdk:
        with pytest.raises(openai.InternalServerError):
            await sdk.files.create(file=("a.txt", b"abc"), purpose="user_data")
    assert objects(s3, bucket) == []
    with psycopg.connect(files_db) as conn:
        assert conn.execute("SELECT count(*) FROM files").fetchone() == (0,)


async def test_indexing_reads_from_s3(s3_app: FastAPI) -> None:
    async with files_sdk(s3_app) as sdk:
        store = await sdk.vector_stores.create(name="s3")
        attached = await attach(sdk, store.id, "kb.md", b"The warehouse ships parcels on Tuesdays.")
        assert attached.status == "completed"
        results = await sdk.vector_stores.search(store.id, query="when are parcels shipped")
        assert results.data[0].file_id == attached.id


async def test_missing_bucket_fails_start_up(moto_s3: Server, files_db: str) -> None:
    app = create_app(s3_settings(moto_s3, "no-such-bucket", files_db))
    with pytest.raises(RuntimeError, match="no-such-bucket"):
        async with running(app):
            pass


async def test_orphan_sweep_removes_unrecorded_objects_and_open_multipart_uploads(
    moto_s3: Server, s3: Minio, bucket: str, files_db: str
) -> None:
    """A process killed mid-upload leaves an open multipart upload (stored parts no object
    shows) or an object whose row was never written; the sweep removes both once stale."""
    app = create_app(
        s3_settings(moto_s3, bucket, files_db).model_copy(update={"orphan_grace": 2.5})
    )
    async with files_sdk(app) as sdk:
        kept = await sdk.files.create(file=("kept.txt", b"recorded"), purpose="user_data")
        s3.put_object(bucket, "file-orphan", io.BytesIO(b"bytes"), 5)
        upload_id = s3._create_multipart_upload(bucket, "file-cutoff", {})
        s3._upload_part(bucket, "file-cutoff", b"p" * 1024, None, upload_id, 1)
        assert [u.upload_id for u in s3._list_multipart_uploads(bucket).uploads] == [upload_id]
        # moto reports a fixed Initiated time (2010) for every multipart upload, so the open
        # upload already looks stale here; the young object is kept.
        assert await app.state.files.sweep_orphans() == 1
        assert s3._list_multipart_uploads(bucket).uploads == []
        assert objects(s3, bucket) == sorted([kept.id, "file-orphan"])
        await asyncio.sleep(3.6)  # S3 times have one-second resolution
        assert await app.state.files.sweep_orphans() == 1
        assert objects(s3, bucket) == [kept.id]
        assert s3._list_multipart_uploads(bucket).uploads == []
        assert (await sdk.files.content(kept.id)).content == b"recorded"
