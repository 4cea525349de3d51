"""The serving benchmarks' timing client: a keep-alive HTTP/1.1 connection per worker, workers
driven for a fixed time, and ``lgos serve`` pinned to a core (``bench_serving``, ``bench_gateway``).
"""

from __future__ import annotations

import asyncio
import gc
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from langchain_core.messages import AIMessageChunk, HumanMessage

from lgos_stack.bench.graphs import REGISTRY, short_graph, stream_graph
from lgos_stack.bench.stats import percentile_ms
from lgos_stack.paths import ROOT
from lgos_stack.processes import Wait, http_ok, wait_for

DELTA_MARK = b"event: response.output_text.delta"

SHORT_GOAL, STREAM_GOAL = 0.75, 0.9
"""LGOS's share of the in-process graph's throughput at c=64: req/s of the short answer,
deltas/s of the stream (``bench_serving`` times it; ``count_tracing_instructions`` counts it)."""


@dataclass
class Sample:
    latency: float
    ttfd: float | None = None
    deltas: int = 0
    failed: bool = False
    """An error status, a broken connection or an incomplete answer: not counted in the rates or
    percentiles, only in ``Cell.failures``."""


@dataclass
class Cell:
    samples: list[Sample] = field(default_factory=list)
    elapsed: float = 0.0

    @property
    def answered(self) -> list[Sample]:
        return [s for s in self.samples if not s.failed]

    @property
    def failures(self) -> int:
        return sum(s.failed for s in self.samples)

    @property
    def rps(self) -> float:
        return len(self.answered) / self.elapsed

    @property
    def deltas_per_s(self) -> float:
        return sum(s.deltas for s in self.answered) / self.elapsed

    def latency(self, q: float) -> float:
        return percentile_ms([s.latency for s in self.answered], q)

    def ttfd(self, q: float) -> float:
        return percentile_ms([s.ttfd for s in self.answered if s.ttfd is not None], q)


class Connection:
    """One keep-alive HTTP/1.1 connection: just enough protocol to time requests exactly.

    ``headers`` are extra request header lines (each ending in CRLF); ``mark`` is what counts as
    one streamed delta in the body (LiteLLM re-emits events as data-only lines, so the gateway
    benchmark counts the event type inside the JSON instead of the ``event:`` line)."""

    def __init__(self, port: int, headers: str = "", mark: bytes = DELTA_MARK) -> None:
        self.port = port
        self.headers = headers
        self.mark = mark
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def request(self, body: bytes) -> Sample:
        if self.writer is None:
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        assert self.reader is not None
        head = (
            f"POST /v1/responses HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{self.headers}\r\n"
        ).encode()
        started = time.perf_counter()
        self.writer.write(head + body)
        headers = (await self.reader.readuntil(b"\r\n\r\n")).lower()
        if not headers.startswith(b"http/1.1 200"):
            raise RuntimeError(headers.decode())
        if b"content-length:" in headers:
            length = int(headers.split(b"content-length:")[1].split(b"\r\n")[0])
            await self.reader.readexactly(length)
            return Sample(time.perf_counter() - started)
        first: float | None = None
        deltas = 0
        while True:
            size = int((await self.reader.readuntil(b"\r\n")).strip(), 16)
            if size == 0:
                await self.reader.readuntil(b"\r\n")
                break
            # Each chunk is one server send holding whole SSE events, so marks never split.
            found = (await self.reader.readexactly(size + 2)).count(self.mark)
            if found and first is None:
                first = time.perf_counter() - started
            deltas += found
        return Sample(time.perf_counter() - started, first, deltas)

    def close(self) -> None:
        """Drop the connection (after a failed request); the next request opens a new one."""
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


async def drive(per_worker: Sequence[Callable[[], Awaitable[Sample]]], seconds: float) -> Cell:
    cell = Cell()

    async def loop(worker: Callable[[], Awaitable[Sample]]) -> None:
        # At least one sample per worker: on a loaded machine a short window can close before a
        # worker first runs, and an empty cell has no rate to compare.
        while True:
            cell.samples.append(await worker())
            if time.perf_counter() >= stop_at:
                return

    gc.collect()
    started = time.perf_counter()
    stop_at = started + seconds
    await asyncio.gather(*(loop(w) for w in per_worker))
    cell.elapsed = time.perf_counter() - started
    return cell


def start_server(
    port: int,
    cores: set[int],
    timeout: float = 30.0,
    *,
    registry: str = REGISTRY,
    extra_env: Mapping[str, str] | None = None,
    log: Path | None = None,
    profile: Path | None = None,
) -> subprocess.Popen[bytes]:
    """``lgos serve`` of ``registry`` (the benchmark graphs) on ``port``, pinned to ``cores``;
    its output goes to ``log`` (None: discarded). With ``profile``, it runs under
    :mod:`lgos_stack.bench.profiled_serve`: SIGUSR1 starts profiling, SIGUSR2 writes the dump to
    ``profile``."""
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "LGOS_PORT": str(port),
        "LGOS_LOG_LEVEL": "warning",
        **(extra_env or {}),
    }
    command = ["-m", "lgos", "serve"]
    if profile is not None:
        command = ["-m", "lgos_stack.bench.profiled_serve"]
        env["BENCH_PROFILE_DUMP"] = str(profile)
    with (log or Path(os.devnull)).open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, *command, registry],
            env=env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            preexec_fn=lambda: os.sched_setaffinity(0, cores),
        )
    if wait_for(lambda: http_ok(f"http://127.0.0.1:{port}/health"), None, timeout) is Wait.READY:
        return process
    process.kill()
    raise SystemExit("LGOS did not start")


def in_process_workers() -> dict[str, Callable[[], Callable[[], Awaitable[Sample]]]]:
    """The benchmark graphs run in-process, by workload: each call makes one worker, whose
    calls run one request and time it."""
    short, stream = short_graph(), stream_graph()
    payload = {"messages": [HumanMessage("hello")]}

    def invoke() -> Callable[[], Awaitable[Sample]]:
        async def run() -> Sample:
            started = time.perf_counter()
            await short.ainvoke(payload)
            return Sample(time.perf_counter() - started)

        return run

    def astream() -> Callable[[], Awaitable[Sample]]:
        async def run() -> Sample:
            started = time.perf_counter()
            first: float | None = None
            count = 0
            async for chunk, _ in stream.astream(payload, stream_mode="messages"):
                if isinstance(chunk, AIMessageChunk) and chunk.text:
                    count += 1
                    if first is None:
                        first = time.perf_counter() - started
            return Sample(time.perf_counter() - started, first, count)

        return run

    return {"short": invoke, "stream": astream}
