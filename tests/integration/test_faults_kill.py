"""Killed processes: SIGKILL an LGOS process mid-stream and mid-resume, a worker mid-run,
the Files service mid-upload; afterwards nothing is stuck, nothing ran twice, every state is
honest and no bytes are left without a record.

Real processes share one fresh PostgreSQL database and the shared Redis; the official SDK drives
them. Side effects are counted in marker files (``effect-<key>`` gains one line per execution),
so a duplicate run shows as a second line. Recovery times are printed (``-s``) for
docs/project/reliability.md; the asserted bounds are the configured ones plus slack for a
loaded machine.
"""

from __future__ import annotations

import asyncio
import hashlib
import io
import os
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import openai
import psycopg
import pytest
import redis as sync_redis
import redis.asyncio as aioredis
from lgos.background.queue import CONSUMER_GROUP, prune_consumers
from lgos.background.records import WORKER_LOST_MESSAGE
from openai import AsyncOpenAI

from tests.support.background import TERMINAL, slow, slow_background, wait_for
from tests.support.clients import sdk_client, sdk_fixture, sync_sdk_client
from tests.support.files import API_KEY, files_client, scratch_database
from tests.support.graphs import SCRIPTED_TEXT
from tests.support.interrupts import resume_of
from tests.support.queue_engine import STALE_AFTER, engine_env
from tests.support.servers import Server, free_port, serve, serve_lgos
from tests.support.shared_state import REDIS_URL, shared_env

TARGET = "tests.support.graphs:create_registry"
LEASE_TTL = 2.0
CONSUMER_IDLE = 1.0
SLACK = 3.0
"""Process scheduling on a shared 2-core machine; added to every configured bound."""


@dataclass
class Stack:
    env: dict[str, str]
    queue: str
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
    base = shared_env(postgres_uri, offline_model, logs, LEASE_TTL)
    queue = f"lgos-test-kill:{uuid.uuid4().hex[:8]}"
    env = {**engine_env(base, queue, markers), "LGOS_WORKER_CONSUMER_IDLE": str(CONSUMER_IDLE)}
    try:
        with serve_lgos("serve", TARGET, env=env, log=logs / "survivor.log") as survivor:
            yield Stack(env, queue, postgres_uri, survivor, logs)
    finally:
        with sync_redis.from_url(REDIS_URL) as redis:
            redis.delete(queue)  # this module's stream only; the server is shared


survivor = sdk_fixture("stack", lambda stack: stack.survivor)


def kill(server: Server) -> float:
    server.process.kill()
    server.process.wait()
    return time.monotonic()


def effects(markers: Path, key: str) -> int:
    path = markers / f"effect-{key}"
    return len(path.read_text().splitlines()) if path.exists() else 0


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
        **resume_of(paused, f"stream-{key}", metadata=slow(0))
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
            resume = resume_of(paused, key, metadata=slow(30))
            pending = asyncio.ensure_future(victim.responses.create(**resume, stream=True))
            await wait_for(markers / f"resumed-{key}", timeout=20)  # mid-resume: holding the lease
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
    long_job: dict[str, Any] = {
        "model": "slow-background",
        "input": key,
        "background": True,
        "metadata": slow(30),
        "extra_headers": {"Idempotency-Key": f"kill-{key}"},
    }
    one_at_a_time = {**stack.env, "LGOS_WORKER_CONCURRENCY": "1"}
    with serve_lgos("worker", TARGET, env=one_at_a_time, log=stack.logs / "doomed.log") as doomed:
        running = await survivor.responses.create(**long_job)
        await wait_for(markers / f"started-{key}", timeout=20)
        waiting = await survivor.responses.create(**slow_background(queued_key, 0))
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
        again = await survivor.responses.create(**long_job)
        assert again.id == running.id and again.status == "failed"
        retry = await survivor.responses.create(**slow_background(key, 0))
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


async def retry_until_not_busy(
    client: AsyncOpenAI, request: dict[str, Any], since: float, bound: float
) -> Any:
    """Retry a resume that gets ``run_busy`` (the dead holder's lease) until it runs."""
    while True:
        try:
            return await client.responses.create(**request)
        except openai.ConflictError as busy:
            if busy.code != "run_busy":
                raise
        assert time.monotonic() - since < bound, "the dead holder's lease stuck"
        await asyncio.sleep(0.1)


async def test_worker_killed_mid_background_resume(
    stack: Stack, survivor: AsyncOpenAI, markers: Path
) -> None:
    key = f"bg-resume-{uuid.uuid4().hex[:8]}"
    paused = await survivor.responses.create(model="counted-after-resume", input="pause")
    resume = resume_of(paused, key, metadata=slow(30))
    async with aioredis.from_url(REDIS_URL) as redis:
        # A dead worker's name in the queue group, with nothing pending: the live worker's
        # sweep removes it once idle for worker_consumer_idle.
        await redis.xgroup_createconsumer(stack.queue, CONSUMER_GROUP, "ghost-worker")
        with serve_lgos("worker", TARGET, env=stack.env, log=stack.logs / "doomed-bg.log") as w:
            queued = await survivor.responses.create(**resume, background=True)
            await wait_for(markers / f"resumed-{key}", timeout=20)

            async def ghost_left() -> bool:
                consumers = await redis.xinfo_consumers(stack.queue, CONSUMER_GROUP)
                return b"ghost-worker" not in [c["name"] for c in consumers]

            deadline = time.monotonic() + 2 * CONSUMER_IDLE + SLACK
            while not await ghost_left():
                assert time.monotonic() < deadline, "the dead consumer was never pruned"
                await asyncio.sleep(0.2)
            killed_at = kill(w)
    seen: list[str] = []
    lost = await history(survivor, queued.id, seen, STALE_AFTER + SLACK)
    assert seen[-1] == "failed" and "completed" not in seen
    assert lost.error is not None and lost.error.message == WORKER_LOST_MESSAGE
    # The paused checkpoint survived the dead worker: the resume runs again, exactly once.
    resume["metadata"] = slow(0)
    done = await retry_until_not_busy(survivor, resume, killed_at, LEASE_TTL + SLACK)
    recovered = time.monotonic() - killed_at
    assert done.output_text == f"done after {key}"
    assert effects(markers, key) == 1
    assert (await survivor.responses.retrieve(queued.id)).status == "failed"
    print(f"\nworker kill mid-resume: failed, then resumed {recovered:.2f}s after the kill")


async def test_dead_workers_consumers_leave_the_queue_group() -> None:
    """Each worker process joins the Redis group under a new name; dead ones with nothing
    pending are pruned, one still holding a message is kept (its message can be reclaimed)."""
    queue = f"lgos-test-prune:{uuid.uuid4().hex[:8]}"
    async with aioredis.from_url(REDIS_URL) as redis:
        try:
            await redis.xgroup_create(queue, CONSUMER_GROUP, id="0", mkstream=True)
            await redis.xadd(queue, {"data": "acked"})
            await redis.xadd(queue, {"data": "held"})
            read = await redis.xreadgroup(CONSUMER_GROUP, "dead", {queue: ">"}, count=1)
            await redis.xack(queue, CONSUMER_GROUP, read[0][1][0][0])
            await redis.xreadgroup(CONSUMER_GROUP, "holder", {queue: ">"}, count=1)
            assert await prune_consumers(redis, queue, idle_after=60) == []  # not idle yet
            await asyncio.sleep(0.3)
            assert await prune_consumers(redis, queue, idle_after=0.2) == ["dead"]
            names = [c["name"] for c in await redis.xinfo_consumers(queue, CONSUMER_GROUP)]
            assert names == [b"holder"]
            assert await prune_consumers(redis, f"{queue}:missing", idle_after=0.2) == []
        finally:
            await redis.delete(queue)


MiB = 1024 * 1024
ORPHAN_GRACE = 1.0
FILES_SWEEP = 0.5


class GatedBody(io.RawIOBase):
    """An upload body whose first ``before`` bytes flow at once; the rest wait for ``gate``
    (the test kills the service meanwhile, so the rest never arrives)."""

    def __init__(self, size: int, before: int) -> None:
        self.size, self.before, self.sent = size, before, 0
        self.reached, self.gate = threading.Event(), threading.Event()

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.sent >= self.before and not self.gate.is_set():
            self.reached.set()
            self.gate.wait(30)
        size = min(64 * 1024 if size < 0 else size, self.size - self.sent)
        self.sent += size
        return b"g" * size


@dataclass
class FilesStack:
    env: dict[str, str]
    postgres_uri: str
    storage: Path
    spool: Path
    logs: Path

    @contextmanager
    def process(self, name: str) -> Iterator[Server]:
        port = free_port()
        env = {**self.env, "FILES_PORT": str(port)}
        with serve(["files_service"], port=port, env=env, log=self.logs / f"{name}.log") as s:
            yield s

    def rows(self) -> int:
        with psycopg.connect(self.postgres_uri) as conn:
            row = conn.execute("SELECT count(*) FROM files").fetchone()
        assert row is not None
        return int(row[0])

    def stored(self) -> list[Path]:
        return sorted(p for p in self.storage.rglob("*") if p.is_file())

    def spooled(self) -> list[Path]:
        return sorted(p for p in self.spool.rglob("*") if p.is_file())


@pytest.fixture
def files_stack(tmp_path: Path) -> Iterator[FilesStack]:
    spool = tmp_path / "spool"
    spool.mkdir()
    with scratch_database() as uri:
        env = {
            "FILES_POSTGRES_URI": uri,
            "FILES_STORAGE_DIR": str(tmp_path / "storage"),
            "FILES_API_KEYS": API_KEY,
            "FILES_MAX_UPLOAD_BYTES": str(256 * MiB),
            "FILES_SWEEP_INTERVAL": str(FILES_SWEEP),
            "FILES_ORPHAN_GRACE": str(ORPHAN_GRACE),
            "TMPDIR": str(spool),  # where the multipart parser spools the file part
        }
        yield FilesStack(env, uri, tmp_path / "storage", spool, tmp_path)


async def wait_until(check: Any, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < timeout, what
        await asyncio.sleep(0.05)
    return time.monotonic() - started


async def test_files_killed_mid_upload(files_stack: FilesStack) -> None:
    fs = files_stack
    # 1. Killed while the body is still arriving (the parser has spooled 16 MiB of it).
    with fs.process("files-a") as victim:
        sdk = sync_sdk_client(f"{victim.url}/v1", api_key=API_KEY)
        body = GatedBody(64 * MiB, before=16 * MiB)
        upload = asyncio.ensure_future(
            asyncio.to_thread(
                sdk.files.create,
                file=("big.bin", body, "application/octet-stream"),
                purpose="assistants",
            )
        )
        assert await asyncio.to_thread(body.reached.wait, 30)
        await asyncio.sleep(0.3)  # the service has read what was sent
        kill(victim)
        body.gate.set()
        with pytest.raises(openai.APIConnectionError):
            await upload
    assert fs.rows() == 0
    assert fs.stored() == [] and fs.spooled() == []  # the spool file had no name to leave
    # 2. Killed while the bytes are being written to storage (after the body arrived).
    data = os.urandom(96 * MiB)
    incoming = fs.storage / ".incoming"
    with fs.process("files-b") as victim:
        async with files_client(f"{victim.url}/v1") as sdk:
            upload = asyncio.ensure_future(
                sdk.files.create(file=("big.bin", data), purpose="assistants")
            )
            while not any(incoming.glob("*.part")):
                assert not upload.done(), "the write to storage finished before it was seen"
                await asyncio.sleep(0.001)
            killed_at = kill(victim)
            with pytest.raises(openai.APIConnectionError):
                await upload
    # Bytes without a row: an unfinished part, or (killed in the instant between) the whole
    # object before its row was written.
    assert fs.stored() and fs.rows() == 0
    # After a restart the sweep removes the part once stale; the upload can be retried.
    with fs.process("files-c") as again:
        restarted = time.monotonic() - killed_at
        swept = await wait_until(
            lambda: not fs.stored(), ORPHAN_GRACE + FILES_SWEEP + SLACK, "orphan part kept"
        )
        async with files_client(f"{again.url}/v1") as sdk:
            retried = await sdk.files.create(file=("big.bin", data), purpose="assistants")
            content = await sdk.files.content(retried.id)
    assert content.content == data
    assert content.response.headers["x-content-sha256"] == hashlib.sha256(data).hexdigest()
    assert fs.rows() == 1
    assert fs.stored() == [fs.storage / retried.id[-2:] / retried.id]
    print(
        f"\nfiles kill: healthy again {restarted:.2f}s after the kill, orphan swept "
        f"{swept:.2f}s after that; the retry stored {len(data) // MiB} MiB intact"
    )
