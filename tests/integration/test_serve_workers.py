"""``lgos serve --workers 2``: two processes on one port sharing real PostgreSQL and Redis.

Every request goes through the official SDK; ``/metrics`` is read with prometheus_client's parser.
A client pinned to one connection (keep-alive) stays on one process, which the answers of
``tests.support.process_graphs`` name, so a test can pause a review in one process and answer it
in the other on purpose.
"""

from __future__ import annotations

import asyncio
import os
import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AsyncExitStack, contextmanager, suppress
from pathlib import Path

import httpx
import pytest
from openai import AsyncOpenAI
from prometheus_client.parser import text_string_to_metric_families

from tests.support.clients import sdk_client
from tests.support.interrupts import answer
from tests.support.process_graphs import TARGET, pids
from tests.support.servers import Server, free_port, serve
from tests.support.shared_state import REDIS_URL

GRACE = 5.0
"""`lgos serve`'s graceful-shutdown seconds."""


def children(pid: int) -> set[int]:
    """The server processes ``pid`` (the supervisor) runs."""
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
                command = (entry / "cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"spawn_main" in command:
                found.add(int(entry.name))
    return found


def metrics_dir(supervisor: int) -> Path:
    """The multiprocess metrics directory the server processes were given."""
    (child, *_) = children(supervisor)
    environ = (Path("/proc") / str(child) / "environ").read_bytes().split(b"\0")
    (found,) = [v for v in environ if v.startswith(b"PROMETHEUS_MULTIPROC_DIR=")]
    return Path(found.split(b"=", 1)[1].decode())


def scraped(server: Server, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples on ``/metrics`` whose labels include ``labels``."""
    response = httpx.get(f"{server.url}/metrics", timeout=10)
    assert response.status_code == 200
    wanted = set(labels.items())
    return sum(
        sample.value
        for family in text_string_to_metric_families(response.text)
        for sample in family.samples
        if sample.name == name and wanted <= set(sample.labels.items())
    )


@contextmanager
def serve_workers(postgres_uri: str, tmp_path: Path) -> Iterator[Server]:
    """``lgos serve --workers 2`` in its own session: whatever a test does to it (a stopped
    supervisor leaves its processes behind), nothing of it outlives the test."""
    port = free_port()
    env = {
        "LGOS_POSTGRES_URI": postgres_uri,
        "LGOS_REDIS_URL": REDIS_URL,
        "LGOS_STATE_DIR": str(tmp_path / "state"),
    }
    args = ["lgos", "serve", TARGET, "--port", str(port), "--workers", "2"]
    supervisor = None
    try:
        # Each process imports and builds the graphs: seconds, more on a loaded machine.
        with serve(
            args, port=port, env=env, log=tmp_path / "lgos.log", timeout=90, preexec_fn=os.setsid
        ) as server:
            supervisor = server.process.pid
            yield server
    finally:
        if supervisor is not None:
            with suppress(ProcessLookupError):
                os.killpg(supervisor, signal.SIGKILL)


@pytest.fixture(scope="module")
def workers(postgres_uri: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """Shared by the tests that leave both processes serving (the last one kills one: the
    supervisor replaces it)."""
    with serve_workers(postgres_uri, tmp_path_factory.mktemp("workers")) as server:
        yield server


@pytest.fixture
def stopping(postgres_uri: str, tmp_path: Path) -> Iterator[Server]:
    with serve_workers(postgres_uri, tmp_path) as server:
        yield server


async def served_by(client: AsyncOpenAI) -> int:
    reply = await client.responses.create(model="serving-process", input="who?")
    (pid,) = pids(reply.output_text)
    return pid


async def pinned_clients(server: Server, stack: AsyncExitStack) -> dict[int, AsyncOpenAI]:
    """One SDK client per server process, each on one kept-alive connection."""
    found: dict[int, AsyncOpenAI] = {}
    for _ in range(40):
        http = httpx.AsyncClient(limits=httpx.Limits(max_connections=1), timeout=30)
        client = await stack.enter_async_context(sdk_client(f"{server.url}/v1", http))
        # Racing the other connections' first requests keeps a lone one from finding the
        # same idle process every time.
        pid = await served_by(client)
        found.setdefault(pid, client)
        if len(found) == 2:
            return found
    raise AssertionError(f"every connection reached the same process: {list(found)}")


@pytest.fixture
async def pinned(workers: Server) -> AsyncIterator[dict[int, AsyncOpenAI]]:
    async with AsyncExitStack() as stack:
        yield await pinned_clients(workers, stack)


async def test_racing_requests_are_served_by_both_processes(workers: Server) -> None:
    async def one(client: AsyncOpenAI, i: int) -> int:
        if i % 2:
            chat = await client.chat.completions.create(
                model="serving-process", messages=[{"role": "user", "content": "who?"}]
            )
            (pid,) = pids(chat.choices[0].message.content or "")
            return pid
        return await served_by(client)

    # The kernel hands each new connection to whichever process accepts first: on an idle
    # machine one process can win a whole round, so rounds go on (fresh connections each)
    # until both have served; every request of every round must be answered.
    served: list[int] = []
    for _ in range(10):
        async with sdk_client(f"{workers.url}/v1") as client:
            served += await asyncio.gather(*(one(client, i) for i in range(32)))
        if len(set(served)) == 2:
            break
    processes = children(workers.process.pid)
    assert set(served) <= processes, (served, processes)
    assert len(set(served)) == 2, served


async def test_one_scrape_counts_the_requests_of_every_process(
    workers: Server, pinned: dict[int, AsyncOpenAI]
) -> None:
    (first, a), (second, b) = pinned.items()
    directory = metrics_dir(workers.process.pid)
    # No directory was configured: the supervisor made a private one.
    assert "PROMETHEUS_MULTIPROC_DIR" not in os.environ
    assert directory.is_dir() and directory.stat().st_mode & 0o077 == 0
    runs = {"graph": "serving-process", "outcome": "completed"}
    before = scraped(workers, "lgos_runs_total", **runs)
    for _ in range(3):
        assert await served_by(a) == first
    for _ in range(2):
        assert await served_by(b) == second
    # Whichever process answers the scrape, it reports both: 3 + 2.
    for _ in range(4):
        assert scraped(workers, "lgos_runs_total", **runs) - before == 5
    assert {f"counter_{first}.db", f"counter_{second}.db"} <= set(os.listdir(directory))


async def test_a_review_paused_in_one_process_is_answered_in_the_other(
    pinned: dict[int, AsyncOpenAI],
) -> None:
    (first, a), (second, b) = pinned.items()
    paused = await a.responses.create(model="process-review", input="Ship it")
    assert paused.output[0].name == "lgos_interrupt"
    done = await b.responses.create(
        model="process-review",
        previous_response_id=paused.id,
        input=[answer(paused.output[0], "approved")],
    )
    assert done.output_text == f"Asked in process {first}, answered in process {second}: approved"


async def test_racing_answers_to_one_review_from_both_processes_resume_it_once(
    pinned: dict[int, AsyncOpenAI],
) -> None:
    (_, a), (_, b) = pinned.items()
    paused = await a.responses.create(model="process-review", input="Ship it")

    async def resume(client: AsyncOpenAI, decision: str) -> str:
        try:
            done = await client.responses.create(
                model="process-review",
                previous_response_id=paused.id,
                input=[answer(paused.output[0], decision)],
            )
        except Exception as error:  # the loser's precise 4xx
            return type(error).__name__
        return done.output_text

    outcomes = await asyncio.gather(resume(a, "yes"), resume(b, "no"))
    answered = [o for o in outcomes if o.startswith("Asked in process")]
    assert len(answered) == 1, outcomes
    assert set(outcomes) - set(answered) == {"ConflictError"}, outcomes


async def test_a_process_that_dies_is_replaced_while_the_other_serves(
    workers: Server, pinned: dict[int, AsyncOpenAI]
) -> None:
    (dead, doomed), (alive, survivor) = pinned.items()
    stream = await doomed.responses.create(model="serving-process-slow", input="who?", stream=True)
    assert (await anext(aiter(stream))).type == "response.created"
    assert scraped(workers, "lgos_open_streams") == 1
    os.kill(dead, signal.SIGKILL)
    assert await served_by(survivor) == alive  # the survivor goes on meanwhile
    deadline = time.monotonic() + 90
    while (replacements := children(workers.process.pid) - {dead, alive}) == set():
        assert time.monotonic() < deadline, "no process replaced the dead one"
        await asyncio.sleep(0.5)
    async with AsyncExitStack() as stack:
        while True:  # the replacement serves once it has started
            assert time.monotonic() < deadline, "the replacement never served"
            try:
                served = set((await pinned_clients(workers, stack)).keys())
            except AssertionError:
                await asyncio.sleep(0.5)
                continue
            break
    assert served == {alive, *replacements}
    # The stream open in the killed process no longer counts as open.
    assert scraped(workers, "lgos_open_streams") == 0
    with suppress(Exception):
        await stream.close()


async def test_sigterm_drains_the_streams_open_in_every_process(stopping: Server) -> None:
    async with AsyncExitStack() as stack:
        pinned = await pinned_clients(stopping, stack)
        directory = metrics_dir(stopping.process.pid)
        await drained(stopping, pinned)
    assert not directory.exists()  # the supervisor removed its metrics directory


async def drained(stopping: Server, pinned: dict[int, AsyncOpenAI]) -> None:
    streams = [
        await client.responses.create(model="serving-process-slow", input="who?", stream=True)
        for client in pinned.values()
    ]
    firsts = [await anext(aiter(stream)) for stream in streams]
    assert all(event.type == "response.created" for event in firsts)
    stopping.process.send_signal(signal.SIGTERM)
    finished = [[event async for event in stream] for stream in streams]
    for pid, events in zip(pinned, finished, strict=True):
        assert events[-1].type == "response.completed", events[-1]
        assert pids(events[-1].response.output_text) == [pid]
    status = await asyncio.to_thread(stopping.process.wait, GRACE + 10)
    assert status == 0
    with pytest.raises(httpx.ConnectError):
        await asyncio.to_thread(httpx.get, f"{stopping.url}/health", timeout=2)
