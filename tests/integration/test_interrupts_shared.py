"""Interrupts on real PostgreSQL and Redis, across two LGOS processes.

PostgreSQL and Redis come from LGOS_TEST_POSTGRES_URI / LGOS_TEST_REDIS_URL (defaults: the
servers this machine kind runs on 127.0.0.1). Each session gets a fresh database.
"""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from collections.abc import Iterator
from contextlib import AsyncExitStack
from datetime import timedelta
from pathlib import Path

import httpx
import openai
import psycopg
import pytest
from lgos.errors import LeaseLostError
from lgos.interrupts.persistence import FencedSaver, open_saver
from lgos.interrupts.redis_coordinator import RedisCoordinator
from lgos.interrupts.sweep import delete_expired_interrupt_runs
from openai import AsyncOpenAI

from tests.support.clients import sdk_client, sdk_pair_fixture
from tests.support.interrupts import answer, resume_of
from tests.support.lgos_processes import api_process
from tests.support.servers import Server
from tests.support.shared_state import REDIS_URL, shared_env

LEASE_TTL = 2.0


@pytest.fixture(scope="module")
def two_servers(
    postgres_uri: str, offline_model: Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Server]]:
    tmp = tmp_path_factory.mktemp("shared")
    env = shared_env(postgres_uri, offline_model, tmp, LEASE_TTL)
    with api_process(env, tmp / "a.log") as a, api_process(env, tmp / "b.log") as b:
        yield a, b


clients = sdk_pair_fixture("two_servers")


async def test_pause_on_one_process_resume_on_the_other(
    clients: tuple[AsyncOpenAI, AsyncOpenAI],
) -> None:
    a, b = clients
    paused = await a.responses.create(model="interruptible-approval", input="Ship it")
    again = await b.responses.create(
        model="interruptible-approval",
        previous_response_id=paused.id,
        input=[answer(paused.output[0], "add a changelog")],
    )
    assert again.output[0].name == "lgos_interrupt"
    events = [
        e
        async for e in await a.responses.create(
            model="interruptible-approval",
            previous_response_id=again.id,
            stream=True,
            input=[answer(again.output[0], "approve")],
        )
    ]
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text.startswith("Decision: approved.")
    with pytest.raises(openai.ConflictError):  # completed: the thread is gone everywhere
        await b.responses.create(
            model="interruptible-approval",
            previous_response_id=again.id,
            input=[answer(again.output[0], "approve")],
        )


async def test_racing_resumes_across_processes(clients: tuple[AsyncOpenAI, AsyncOpenAI]) -> None:
    a, b = clients
    paused = await a.responses.create(model="slow-after-resume", input="race")
    resume = resume_of(paused, "go")
    results = await asyncio.gather(
        a.responses.create(**resume),
        b.responses.create(**resume),
        b.responses.create(**resume),
        return_exceptions=True,
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1, results
    assert all(isinstance(r, openai.ConflictError) for r in losers), losers
    assert any(getattr(r, "code", None) == "run_busy" for r in losers)


async def test_killed_process_leaves_a_resumable_run_not_a_stuck_lease(
    postgres_uri: str,
    offline_model: Server,
    two_servers: tuple[Server, Server],
    tmp_path: Path,
) -> None:
    env = shared_env(postgres_uri, offline_model, tmp_path, LEASE_TTL)
    _, survivor = two_servers
    with api_process(env, tmp_path / "victim.log") as victim:
        async with (
            sdk_client(f"{victim.url}/v1") as doomed,
            sdk_client(f"{survivor.url}/v1") as other,
        ):
            paused = await doomed.responses.create(model="slow-after-resume", input="crash")
            resume = resume_of(paused, "go", metadata={"lgos_settings": '{"seconds": 30}'})
            pending = asyncio.ensure_future(doomed.responses.create(**resume))
            await asyncio.sleep(1.0)  # the resume holds the lease and is mid-run
            victim.process.send_signal(signal.SIGKILL)
            with pytest.raises(openai.APIConnectionError):
                await pending
            with pytest.raises(openai.ConflictError) as busy:
                await other.responses.create(**resume)
            assert busy.value.code == "run_busy"
            await asyncio.sleep(LEASE_TTL + 0.5)  # the dead holder's lease expires
            resume["metadata"] = {"lgos_settings": '{"seconds": 0}'}
            done = await other.responses.create(**resume)
            assert done.output_text == "done after go"


async def test_fencing_refuses_writes_after_the_lease_is_lost(
    postgres_uri: str, tmp_path: Path
) -> None:
    coordinator = RedisCoordinator(REDIS_URL, ttl=0.3)
    async with AsyncExitStack() as stack:
        saver = await open_saver(stack, postgres_uri, tmp_path)
        key = f"fence-test-{uuid.uuid4().hex}"
        first = await coordinator.acquire(key)
        assert first is not None
        assert await coordinator.acquire(key) is None  # held
        await asyncio.sleep(0.5)  # expired
        second = await coordinator.acquire(key)
        assert second is not None
        assert second.token > first.token
        stale = FencedSaver(saver, coordinator, first)
        config = {"configurable": {"thread_id": key, "checkpoint_ns": ""}}
        with pytest.raises(LeaseLostError):
            await stale.aput_writes(config, [("x", 1)], "task")  # type: ignore[arg-type]
        assert await coordinator.holds(second)
        await coordinator.release(second)
        await coordinator.release(first)  # not the holder: no effect, no error
    await coordinator.close()


async def test_sweep_on_postgres(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], postgres_uri: str, tmp_path: Path
) -> None:
    a, b = clients
    abandoned = await a.responses.create(model="interruptible-approval", input="forget me")
    async with AsyncExitStack() as stack:
        saver = await open_saver(stack, postgres_uri, tmp_path)
        swept = await delete_expired_interrupt_runs(saver, timedelta(seconds=-1))
    assert swept
    with pytest.raises(openai.ConflictError):
        await b.responses.create(
            model="interruptible-approval",
            previous_response_id=abandoned.id,
            input=[answer(abandoned.output[0], "approve")],
        )


async def test_health_of_both(two_servers: tuple[Server, Server]) -> None:
    async with httpx.AsyncClient() as http:
        for server in two_servers:
            assert (await http.get(f"{server.url}/health")).json()["status"] == "ok"


async def test_lgos_sweep_command(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], postgres_uri: str, tmp_path: Path
) -> None:
    import subprocess
    import sys

    a, _ = clients
    abandoned = await a.responses.create(model="interruptible-approval", input="sweep me")
    env = {**os.environ, "LGOS_POSTGRES_URI": postgres_uri}
    result = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, "-m", "lgos", "sweep", "--ttl", "0"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("swept ")
    assert int(result.stdout.split()[1]) >= 1
    with pytest.raises(openai.ConflictError):
        await a.responses.create(
            model="interruptible-approval",
            previous_response_id=abandoned.id,
            input=[answer(abandoned.output[0], "approve")],
        )


async def test_store_is_shared_through_postgres(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], postgres_uri: str
) -> None:
    a, b = clients
    note = f"shared-{uuid.uuid4().hex[:8]}"
    await a.responses.create(model="notes", input=f"remember {note}")
    listed = await b.responses.create(model="notes", input="list")
    assert note in listed.output_text.split(" | ")
    with psycopg.connect(postgres_uri) as conn:
        rows = conn.execute("select key from store where prefix = 'test-notes'").fetchall()
    assert (note,) in rows


async def test_resume_as_soon_as_the_streamed_pause_is_read(
    two_servers: tuple[Server, Server],
) -> None:
    """A client that resumes the moment its stream of the pause ends (the load benchmark's
    lean client does) finds the run's lease already released: no 409 ``run_busy``."""
    from lgos_stack.bench.load_client import stream_response

    ports = [int(server.url.rsplit(":", 1)[1]) for server in two_servers]
    for attempt in range(8):
        paused = await stream_response(
            ports[0], {"model": "interruptible-approval", "input": "Ship it"}
        )
        assert paused.ok and paused.response is not None, paused.error
        call = paused.response["output"][0]
        resume = {
            "model": "interruptible-approval",
            "previous_response_id": paused.response["id"],
            "input": [
                {"type": "function_call_output", "call_id": call["call_id"], "output": "approve"}
            ],
        }
        done = await stream_response(ports[attempt % 2], resume)
        assert done.ok, done.error
        assert done.text.startswith("Decision: approved.")
