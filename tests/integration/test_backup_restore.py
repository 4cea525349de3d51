"""Backup and restore as docs/how-to/backup-restore.md tells an operator, on the stack's own
PostgreSQL 18 build: state made through the SDK (a paused review, a background Response with an
idempotency key, a file in a vector store), the services stopped, ``pg_dump`` and a copy of the
bytes, everything wiped (a new cluster, an empty storage folder, an empty Redis), ``pg_restore``
and the bytes copied back, the services started again; then the same SDK finds it all."""

from __future__ import annotations

import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.background import poll, slow_background
from tests.support.clients import sdk_client
from tests.support.files import attach, files_client
from tests.support.interrupts import resume_of
from tests.support.lgos_processes import api_process, worker_process
from tests.support.private_servers import PrivatePostgres, PrivateRedis
from tests.support.servers import ROOT, Server, free_port, serve

LGOS_KEY, FILES_KEY = "sk-lgos-backup", "sk-files-backup"
PAGE = ROOT / "docs" / "how-to" / "backup-restore.md"
STACK_PORT = 3001
"""Where ``make dev``'s PostgreSQL listens: the port the page's commands name."""
FACT = "Sourdough starters double within six hours at room temperature."


CONNECT = ("-h", "127.0.0.1", "-U", "postgres")


def dump_command(port: int, dump: str, bin: str = '"$PG_BIN"') -> list[str]:
    return [f"{bin}/pg_dump", *CONNECT, "-p", str(port), "-Fc", "-f", dump, "postgres"]


def restore_command(port: int, dump: str, bin: str = '"$PG_BIN"') -> list[str]:
    clean = ("--clean", "--if-exists")
    return [f"{bin}/pg_restore", *CONNECT, "-p", str(port), *clean, "-d", "postgres", dump]


def test_the_page_shows_the_commands_this_test_runs() -> None:
    page = PAGE.read_text()
    for command in (
        dump_command(STACK_PORT, "lgos.dump"),
        restore_command(STACK_PORT, "lgos.dump"),
    ):
        assert " ".join(command) in page
    assert "tests/integration/test_backup_restore.py" in page


@dataclass(frozen=True)
class Stack:
    lgos: Server
    files: Server


@contextmanager
def services(postgres: PrivatePostgres, redis: PrivateRedis, state: Path) -> Iterator[Stack]:
    """LGOS, an LGOS worker and the Files service on one database, as ``make dev`` runs them."""
    lgos_env = {
        "LGOS_POSTGRES_URI": postgres.uri,
        "LGOS_REDIS_URL": redis.url,
        "LGOS_BACKGROUND": "distributed",
        "LGOS_API_KEYS": f"{LGOS_KEY}=gateway",
        "LGOS_STATE_DIR": str(state / "lgos"),
    }
    port = free_port()
    files_env = {
        "FILES_PORT": str(port),
        "FILES_POSTGRES_URI": postgres.uri,
        "FILES_STORAGE_DIR": str(state / "files"),
        "FILES_API_KEYS": FILES_KEY,
    }
    logs = state / "logs"
    logs.mkdir(exist_ok=True)
    stamp = uuid.uuid4().hex[:6]
    with ExitStack() as stack:
        lgos = stack.enter_context(api_process(lgos_env, logs / f"lgos-{stamp}.log"))
        stack.enter_context(worker_process(lgos_env, logs / f"worker-{stamp}.log"))
        files = stack.enter_context(
            serve(["files_service"], port=port, env=files_env, log=logs / f"files-{stamp}.log")
        )
        yield Stack(lgos, files)


def run(command: list[str]) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr


@pytest.fixture
def postgres() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    try:
        server.start()
        yield server
    finally:
        server.close()


async def test_a_restored_backup_resumes_runs_and_serves_responses_and_files(
    postgres: PrivatePostgres, tmp_path: Path
) -> None:
    redis = PrivateRedis(tmp_path / "redis.log")
    redis.start()
    state, backup = tmp_path / "state", tmp_path / "backup"
    state.mkdir()
    backup.mkdir()
    idempotency = {"Idempotency-Key": f"backup-{uuid.uuid4().hex}"}
    background = slow_background("kept", 0.1)
    content = FACT.encode() + b"\n" + bytes(range(256))
    started = time.monotonic()
    try:
        with services(postgres, redis, state) as before:
            async with (
                sdk_client(f"{before.lgos.url}/v1", api_key=LGOS_KEY) as lgos,
                files_client(f"{before.files.url}/v1", api_key=FILES_KEY) as files,
            ):
                paused = await lgos.responses.create(
                    model="interruptible-approval", input="Ship it"
                )
                assert paused.output[0].type == "function_call"
                queued = await lgos.responses.create(**background, extra_headers=idempotency)
                finished = await poll(lgos, queued.id)
                assert finished.status == "completed"
                store = await files.vector_stores.create(name="kept")
                attached = await attach(files, store.id, "starter.txt", FACT.encode())
                assert attached.status == "completed"
                raw = await files.files.create(file=("raw.bin", content), purpose="assistants")

        # Backup: the database first, then the bytes (the page's order).
        dump = str(backup / "lgos.dump")
        run(dump_command(postgres.port, dump, str(postgres.bin)))
        shutil.copytree(state / "files", backup / "files")

        # Disaster: a new, empty cluster; no bytes; an empty Redis.
        postgres.close()
        fresh = PrivatePostgres()
        fresh.start()
        shutil.rmtree(state / "files")
        redis.restart()

        try:
            run(restore_command(fresh.port, dump, str(fresh.bin)))
            shutil.copytree(backup / "files", state / "files")
            with services(fresh, redis, state) as after:
                async with (
                    sdk_client(f"{after.lgos.url}/v1", api_key=LGOS_KEY) as lgos,
                    files_client(f"{after.files.url}/v1", api_key=FILES_KEY) as files,
                ):
                    done = await lgos.responses.create(**resume_of(paused, "approve"))
                    assert done.status == "completed"
                    assert done.output_text.startswith("Decision: approved.")
                    kept = await lgos.responses.retrieve(queued.id)
                    assert kept.status == "completed"
                    assert kept.output_text == finished.output_text != ""
                    again = await lgos.responses.create(**background, extra_headers=idempotency)
                    assert again.id == queued.id
                    downloaded = await files.files.content(raw.id)
                    assert downloaded.read() == content
                    found = await files.vector_stores.search(
                        store.id, query="sourdough starters", max_num_results=1
                    )
                    [hit] = found.data
                    assert hit.file_id == attached.id
                    assert FACT in hit.content[0].text
        finally:
            fresh.close()
    finally:
        redis.stop()
    print(f"backup and restore round trip in {time.monotonic() - started:.1f}s")
