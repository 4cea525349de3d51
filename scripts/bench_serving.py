"""LGOS serving overhead against the same compiled graph invoked in-process.

Two workloads on a trivial graph with a fake streaming chat model (no network): a short
non-streaming answer (`ainvoke` vs. `POST /v1/responses`) and a 200-chunk streamed answer
(`astream(stream_mode="messages")` vs. a streaming Responses request). One LGOS server worker
runs pinned to one core; the load generator (a lean keep-alive HTTP/1.1 client, one connection
per concurrent worker) and the in-process runs use the other.

    make bench            # or: uv run python -m scripts.bench_serving --seconds 3

``--profile`` then serves each workload once more under ``cProfile`` at concurrency 64 and prints
where the server's time went, by component (LGOS, the graph, uvicorn, Starlette, pydantic ...):
the shares to read before and after a change to the request path.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import orjson
import psutil
from lgos_stack.bench.graphs import STREAM_CHUNKS
from lgos_stack.bench.machine import install_uvloop
from lgos_stack.bench.profile_shares import shares
from lgos_stack.bench.profile_shares import table as shares_table
from lgos_stack.bench.serving import (
    SHORT_GOAL,
    STREAM_GOAL,
    Cell,
    Connection,
    Sample,
    drive,
    in_process_workers,
    start_server,
)
from lgos_stack.ports import free_port
from lgos_stack.processes import wait_for

ROOT = Path(__file__).resolve().parents[1]

CONCURRENCY = (1, 16, 64)
PROFILED_CONCURRENCY = 64


# --- in-process --------------------------------------------------------------------------


# --- over HTTP -----------------------------------------------------------------------------


def http_workers(port: int) -> dict[str, Callable[[], Callable[[], Awaitable[Sample]]]]:
    short = orjson.dumps({"model": "bench-short", "input": "hello"})
    stream = orjson.dumps({"model": "bench-stream", "input": "hello", "stream": True})

    def make(body: bytes) -> Callable[[], Callable[[], Awaitable[Sample]]]:
        def new_worker() -> Callable[[], Awaitable[Sample]]:
            connection = Connection(port)
            return lambda: connection.request(body)

        return new_worker

    return {"short": make(short), "stream": make(stream)}


async def measure(
    workers: dict[str, Callable[[], Callable[[], Awaitable[Sample]]]], seconds: float
) -> dict[tuple[str, int], Cell]:
    results = {}
    for workload in ("short", "stream"):
        warm = workers[workload]()
        for _ in range(20):
            await warm()
        for concurrency in CONCURRENCY:
            per_worker = [workers[workload]() for _ in range(concurrency)]
            results[(workload, concurrency)] = await drive(per_worker, seconds)
    return results


def table(local: dict[tuple[str, int], Cell], served: dict[tuple[str, int], Cell]) -> list[str]:
    rows = [
        "| workload | c | in-process req/s | LGOS req/s | ratio | LGOS p50 / p99 ms | "
        "in-process p50 / p99 ms | TTFD p50 / p99 ms (LGOS) | TTFD p50 (in-process) | "
        "deltas/s LGOS / in-process (ratio) |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (workload, concurrency), mine in served.items():
        base = local[(workload, concurrency)]
        row = (
            f"| {workload} | {concurrency} | {base.rps:,.0f} | {mine.rps:,.0f} | "
            f"{mine.rps / base.rps:.2f} | {mine.latency(0.5):.1f} / {mine.latency(0.99):.1f} | "
            f"{base.latency(0.5):.1f} / {base.latency(0.99):.1f} | "
        )
        if workload == "stream":
            row += (
                f"{mine.ttfd(0.5):.2f} / {mine.ttfd(0.99):.2f} | {base.ttfd(0.5):.2f} | "
                f"{mine.deltas_per_s:,.0f} / {base.deltas_per_s:,.0f} "
                f"({mine.deltas_per_s / base.deltas_per_s:.2f}) |"
            )
        else:
            row += "n/a | n/a | n/a |"
        rows.append(row)
    return rows


async def profiled_cell(
    server: subprocess.Popen[bytes], port: int, workload: str, seconds: float
) -> None:
    """Warmed up, then the c=64 cell with the server's profiler on (SIGUSR1 .. SIGUSR2)."""
    workers = http_workers(port)[workload]
    warm = workers()
    for _ in range(20):
        await warm()
    per_worker = [workers() for _ in range(PROFILED_CONCURRENCY)]
    server.send_signal(signal.SIGUSR1)
    await drive(per_worker, seconds)
    server.send_signal(signal.SIGUSR2)


def profile(server_core: int, seconds: float) -> dict[str, list[tuple[str, float]]]:
    """Each workload served once more under cProfile at c=64: its server's time by component."""
    columns = {}
    with tempfile.TemporaryDirectory(prefix="bench-profile-") as folder:
        for workload in ("short", "stream"):
            dump = Path(folder) / f"{workload}.prof"
            port = free_port()
            server = start_server(port, {server_core}, profile=dump)
            try:
                asyncio.run(profiled_cell(server, port, workload, seconds))
                wait_for(dump.exists, None, 30.0)
            finally:
                server.terminate()
                server.wait()
            columns[f"{workload}, c={PROFILED_CONCURRENCY}"] = shares(dump)
    return columns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per measurement cell")
    parser.add_argument(
        "--freeze-baseline",
        action="store_true",
        help="gc.freeze() before the in-process runs too, as `lgos serve` does after start-up",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="then profile the server (cProfile) at c=64 and print its time by component",
    )
    args = parser.parse_args()
    cores = sorted(os.sched_getaffinity(0))
    server_core, load_core = cores[0], cores[-1]
    os.sched_setaffinity(0, {load_core})

    install_uvloop()

    workers = in_process_workers()
    if args.freeze_baseline:
        gc.freeze()
    local = asyncio.run(measure(workers, args.seconds))
    port = free_port()
    server = start_server(port, {server_core})
    try:
        time.sleep(1.0)
        rss_idle = psutil.Process(server.pid).memory_info().rss / 2**20
        served = asyncio.run(measure(http_workers(port), args.seconds))
        rss_loaded = psutil.Process(server.pid).memory_info().rss / 2**20
    finally:
        server.terminate()
        server.wait()

    print(
        f"\nLGOS serving overhead ({args.seconds:.0f} s per cell; server on core {server_core}, "
        f"load and in-process on core {load_core}; {STREAM_CHUNKS}-chunk stream)\n"
    )
    print("\n".join(table(local, served)))
    short_ratio = served[("short", 64)].rps / local[("short", 64)].rps
    stream_ratio = served[("stream", 64)].deltas_per_s / local[("stream", 64)].deltas_per_s
    added_ttfd = served[("stream", 1)].ttfd(0.5) - local[("stream", 1)].ttfd(0.5)
    checks = [
        (
            "non-streaming req/s ratio at c=64",
            f"{short_ratio:.2f}",
            f"≥ {SHORT_GOAL}",
            short_ratio >= SHORT_GOAL,
        ),
        (
            "streamed deltas/s ratio at c=64",
            f"{stream_ratio:.2f}",
            f"≥ {STREAM_GOAL}",
            stream_ratio >= STREAM_GOAL,
        ),
        ("added time-to-first-delta p50 at c=1", f"{added_ttfd:.2f} ms", "≤ 5 ms", added_ttfd <= 5),
        ("server RSS idle", f"{rss_idle:.0f} MB", "≤ 150 MB", rss_idle <= 150),
        ("server RSS after load", f"{rss_loaded:.0f} MB", "(reported)", True),
    ]
    print("\n| target | measured | goal | met |\n|---|---|---|---|")
    for name, value, goal, ok in checks:
        print(f"| {name} | {value} | {goal} | {'yes' if ok else 'NO'} |")
    if args.profile:
        columns = profile(server_core, args.seconds)
        print(
            f"\nWhere the server's time went (cProfile, own time by component, "
            f"{args.seconds:.0f} s at c={PROFILED_CONCURRENCY}; the profiler slows Python calls, "
            "so read shares, not rates)\n"
        )
        print("\n".join(shares_table(columns)))


if __name__ == "__main__":
    main()
