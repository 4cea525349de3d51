"""PostgreSQL restarted under real traffic: two LGOS processes, a worker and the Files service.

Everything runs against a PRIVATE embedded PostgreSQL 18 (never the shared server), stopped and
started in place on its port, so every pooled connection the processes hold dies with it. Redis
is the shared one (not restarted here). Figures (seconds) are printed for
docs/project/reliability.md: run with ``-s`` to see them.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest
from openai import AsyncOpenAI

from tests.support.background import poll, slow, slow_background, wait_for
from tests.support.clients import sdk_pair_fixture
from tests.support.faults import (
    assert_unavailable,
    distributed_env,
    timed,
    two_apis_and_a_worker,
)
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import files_client
from tests.support.graphs import SCRIPTED_TEXT
from tests.support.interrupts import answer
from tests.support.private_servers import PrivatePostgres
from tests.support.servers import Server, free_port, serve
from tests.support.shared_state import shared_env

POOL_TIMEOUT = 2.0
# A request during the outage must fail within the pool's wait plus process/scheduling slack.
FAIL_FAST_BOUND = POOL_TIMEOUT + 3.0


@dataclass
class Stack:
    pg: PrivatePostgres
    uri: str
    apis: list[Server]
    logs: Path


@pytest.fixture(scope="module")
def private_pg() -> Iterator[PrivatePostgres]:
    server = PrivatePostgres()
    server.start()
    try:
        yield server
    finally:
        server.close()


def pool_env() -> dict[str, str]:
    return {
        "LGOS_POSTGRES_POOL_TIMEOUT": str(POOL_TIMEOUT),
        "LGOS_POSTGRES_CONNECT_TIMEOUT": "2",
        "LGOS_POSTGRES_RECONNECT_TIMEOUT": "3",
    }


@pytest.fixture(scope="module")
def stack(
    private_pg: PrivatePostgres,
    offline_model: Server,
    markers: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("faults-pg")
    uri = private_pg.create_database("lgos_faults")
    base = {**shared_env(uri, offline_model, logs, 5.0), **pool_env()}
    with two_apis_and_a_worker(distributed_env(base, "lgos-faults-pg", markers), logs) as apis:
        yield Stack(private_pg, uri, apis, logs)


clients = sdk_pair_fixture("stack", lambda stack: stack.apis)


async def test_postgres_restart_during_traffic(
    stack: Stack, clients: tuple[AsyncOpenAI, AsyncOpenAI]
) -> None:
    a, b = clients
    await a.responses.create(model="notes", input="remember before the restart")
    paused = await a.responses.create(model="interruptible-approval", input="Ship it")
    assert paused.output[0].type == "function_call"

    # In flight: a checkpointed stream; PostgreSQL goes away while it streams.
    events: list[Any] = []
    first_delta = asyncio.Event()

    async def consume() -> None:
        stream = await b.responses.create(model="slow-stream-interrupts", input="hi", stream=True)
        async for event in stream:
            events.append(event)
            if event.type == "response.output_text.delta":
                first_delta.set()

    in_flight = asyncio.create_task(consume())
    await asyncio.wait_for(first_delta.wait(), timeout=15)
    down_at = time.monotonic()
    stack.pg.stop()
    await asyncio.wait_for(in_flight, timeout=30)  # it ends: no hang
    partial = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "server_error"
    assert partial and SCRIPTED_TEXT.startswith(partial)
    assert events[-1].response.output_text == partial  # the partial text is kept

    # During the outage, each pool fails fast with a clear 503.
    outage = await asyncio.gather(
        timed(a.responses.create(model="notes", input="list")),  # the Store
        timed(b.responses.create(model="interruptible-approval", input="x")),  # checkpointer
        timed(
            a.responses.create(  # background records
                model="slow-background", input="x", background=True, metadata=slow(0)
            )
        ),
        timed(
            b.responses.create(  # a resume: the paused run is read from PostgreSQL
                model="interruptible-approval",
                previous_response_id=paused.id,
                input=[answer(paused.output[0], "approve")],
            )
        ),
    )
    print("\n[pg-outage]", [(type(r).__name__, round(t, 2)) for r, t in outage])
    for result, took in outage:
        assert_unavailable(result, took, FAIL_FAST_BOUND)

    stack.pg.start()
    back_at = time.monotonic()
    # The very first requests after it is back succeed, on every pool of both processes.
    (notes, t_store), (resumed, t_resume), (queued, t_records) = await asyncio.gather(
        timed(b.responses.create(model="notes", input="list")),
        timed(
            b.responses.create(
                model="interruptible-approval",
                previous_response_id=paused.id,
                input=[answer(paused.output[0], "approve")],
            )
        ),
        timed(a.responses.create(**slow_background("after", 0))),
    )
    assert not isinstance(notes, Exception), notes
    assert notes.output_text == "before the restart"
    assert not isinstance(resumed, Exception), resumed  # the paused run stayed resumable
    assert resumed.output_text.startswith("Decision: approved.")
    assert not isinstance(queued, Exception), queued
    done = await poll(a, queued.id, timeout=15)
    assert done.status == "completed", done.error
    t_job = time.monotonic() - back_at
    fresh = await a.responses.create(model="slow-stream-interrupts", input="again")
    assert fresh.output_text == SCRIPTED_TEXT
    print(
        f"\n[pg-restart] outage {back_at - down_at:.1f}s; "
        f"outage 503s in {', '.join(f'{t:.2f}' for _, t in outage)}s; "
        f"first success after restart: store {t_store:.2f}s, resume {t_resume:.2f}s, "
        f"background create {t_records:.2f}s, job completed {t_job:.2f}s"
    )


async def test_a_background_job_survives_a_restart_mid_run(
    stack: Stack, clients: tuple[AsyncOpenAI, AsyncOpenAI], markers: Path
) -> None:
    a, b = clients
    key = f"pg-midrun-{uuid.uuid4().hex[:8]}"
    queued = await a.responses.create(**slow_background(key, 2.0))
    await wait_for(markers / f"started-{key}")
    stack.pg.restart()  # heartbeats fail meanwhile; the worker keeps the job
    done = await poll(b, queued.id, timeout=20)
    assert done.status == "completed", done.error
    assert done.output_text == SCRIPTED_TEXT
    # Consistent: the row agrees with its snapshot, and the job ran exactly once.
    async with await psycopg.AsyncConnection.connect(stack.uri) as conn:
        cursor = await conn.execute(
            "SELECT status, snapshot->>'status' FROM lgos_background_responses WHERE id = %s",
            (queued.id,),
        )
        assert await cursor.fetchone() == ("completed", "completed")
    assert (markers / f"started-{key}").read_text().splitlines() == [f"started-{key}"]
    assert (markers / f"finished-{key}").read_text().splitlines() == [f"finished-{key}"]


@pytest.fixture
def files_service(
    private_pg: PrivatePostgres, tmp_path: Path
) -> Iterator[tuple[Server, PrivatePostgres]]:
    uri = private_pg.create_database(f"files_faults_{uuid.uuid4().hex[:8]}")
    port = free_port()
    env = {
        "FILES_PORT": str(port),
        "FILES_POSTGRES_URI": uri,
        "FILES_STORAGE_DIR": str(tmp_path / "storage"),
        "FILES_API_KEYS": FILES_KEY,
        "FILES_POSTGRES_POOL_TIMEOUT": str(POOL_TIMEOUT),
        "FILES_POSTGRES_CONNECT_TIMEOUT": "2",
        "FILES_POSTGRES_RECONNECT_TIMEOUT": "3",
    }
    with serve(["files_service"], port=port, env=env, log=tmp_path / "files.log") as server:
        yield server, private_pg


async def test_files_service_pool_across_a_restart(
    files_service: tuple[Server, PrivatePostgres],
) -> None:
    server, pg = files_service
    async with files_client(f"{server.url}/v1") as files:
        before = await files.files.create(file=("a.txt", b"alpha"), purpose="assistants")
        pg.stop()
        failed, took = await timed(files.files.list())
        assert_unavailable(failed, took, FAIL_FAST_BOUND)
        pg.start()
        # The first requests after the restart get live connections.
        listed, t_list = await timed(files.files.list())
        assert not isinstance(listed, Exception), listed
        assert [f.id for f in listed.data] == [before.id]
        after = await files.files.create(file=("b.txt", b"beta"), purpose="assistants")
        assert (await files.files.content(after.id)).content == b"beta"
        print(f"\n[files-pg-restart] outage 503 in {took:.2f}s; first list after {t_list:.2f}s")
