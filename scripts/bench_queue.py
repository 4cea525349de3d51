"""Background queue latency and throughput on the distributed engine, with 1 and 2 workers.

One ``lgos serve`` (LGOS_BACKGROUND=distributed) and ``lgos worker`` processes share a fresh
PostgreSQL database and a Redis stream; the graph is trivial (``bench-background``: a fake
model's one-line answer), so the numbers are the engine's own cost.

- queue latency: create → in_progress, from the record's own timestamps (row inserted →
  row claimed, one PostgreSQL clock), for jobs created one at a time (idle queue) and for a
  burst created all at once (includes the backlog);
- jobs/s: the burst's size over first insert → last terminal update.

    make bench     # or: uv run python -m scripts.bench_queue --jobs 300

PostgreSQL and Redis: LGOS_BENCH_POSTGRES_URI (an admin URI; a database is created and dropped)
and LGOS_BENCH_REDIS_URL, defaulting to this machine kind's servers on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx
import psycopg
from lgos_stack.bench.graphs import REGISTRY as TARGET
from lgos_stack.bench.services import REDIS_URL, database
from lgos_stack.bench.stats import percentile_ms
from lgos_stack.paths import ROOT
from lgos_stack.ports import free_port
from lgos_stack.processes import serve

BODY = {"model": "bench-background", "input": "hi", "background": True}
TERMINAL = ("completed", "incomplete", "failed", "cancelled")


@contextmanager
def process(args: list[str], env: dict[str, str], port: int) -> Iterator[None]:
    with serve(["lgos", *args, "--port", str(port)], port=port, env=env, log=None, timeout=60):
        yield


async def create(http: httpx.AsyncClient) -> str:
    response = await http.post("/v1/responses", json=BODY)
    response.raise_for_status()
    return str(response.json()["id"])


async def wait_terminal(conn: psycopg.AsyncConnection, ids: list[str]) -> None:
    while True:
        cursor = await conn.execute(
            "SELECT count(*) FROM lgos_background_responses"
            " WHERE id = ANY(%s) AND status = ANY(%s)",
            (ids, list(TERMINAL)),
        )
        row = await cursor.fetchone()
        if row is not None and row[0] == len(ids):
            return
        await asyncio.sleep(0.01)


async def latencies(conn: psycopg.AsyncConnection, ids: list[str]) -> list[float]:
    cursor = await conn.execute(
        """SELECT extract(epoch FROM started_at - created_at) FROM lgos_background_responses
           WHERE id = ANY(%s) AND status = 'completed'""",
        (ids,),
    )
    values = [float(row[0]) for row in await cursor.fetchall()]
    if len(values) != len(ids):
        raise SystemExit(f"only {len(values)} of {len(ids)} jobs completed")
    return values


async def span(conn: psycopg.AsyncConnection, ids: list[str]) -> float:
    cursor = await conn.execute(
        """SELECT extract(epoch FROM max(updated_at) - min(created_at))
           FROM lgos_background_responses WHERE id = ANY(%s)""",
        (ids,),
    )
    row = await cursor.fetchone()
    assert row is not None
    return float(row[0])


async def measure(api_port: int, db: str, sequential: int, burst: int) -> dict[str, float]:
    async with (
        httpx.AsyncClient(base_url=f"http://127.0.0.1:{api_port}", timeout=60) as http,
        await psycopg.AsyncConnection.connect(db, autocommit=True) as conn,
    ):
        one_by_one: list[str] = []
        for _ in range(sequential):
            job = await create(http)
            await wait_terminal(conn, [job])
            one_by_one.append(job)
        idle = await latencies(conn, one_by_one)

        gate = asyncio.Semaphore(32)

        async def limited() -> str:
            async with gate:
                return await create(http)

        ids = await asyncio.gather(*(limited() for _ in range(burst)))
        await wait_terminal(conn, ids)
        loaded = await latencies(conn, ids)
        return {
            "idle_p50": percentile_ms(idle, 0.5),
            "idle_p99": percentile_ms(idle, 0.99),
            "burst_p50": percentile_ms(loaded, 0.5),
            "burst_p99": percentile_ms(loaded, 0.99),
            "jobs_per_s": burst / await span(conn, ids),
        }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--jobs", type=int, default=300, help="burst size per worker count")
    parser.add_argument("--sequential", type=int, default=50, help="jobs created one at a time")
    parser.add_argument("--concurrency", type=int, default=8, help="jobs per worker at once")
    args = parser.parse_args()

    results: dict[int, dict[str, float]] = {}
    with database() as db:
        env = {
            "LGOS_BACKGROUND": "distributed",
            "LGOS_POSTGRES_URI": db,
            "LGOS_REDIS_URL": REDIS_URL,
            "LGOS_BACKGROUND_QUEUE": f"lgos-bench:{uuid.uuid4().hex[:8]}",
            "LGOS_WORKER_CONCURRENCY": str(args.concurrency),
            "LGOS_LOG_LEVEL": "warning",
            "LGOS_STATE_DIR": str(ROOT / ".lgos-bench"),
        }
        api_port = free_port()
        with process(["serve", TARGET], env, api_port):
            for workers in (1, 2):
                with ExitStack() as stack:
                    for _ in range(workers):
                        stack.enter_context(process(["worker", TARGET], env, free_port()))
                    results[workers] = asyncio.run(
                        measure(api_port, db, args.sequential, args.jobs)
                    )

    print(f"Background queue, trivial graph, {os.cpu_count()} CPUs shared by API, workers,")
    print(f"PostgreSQL and Redis; worker concurrency {args.concurrency}, burst {args.jobs} jobs.")
    print()
    print("| workers | idle p50 ms | idle p99 ms | burst p50 ms | burst p99 ms | jobs/s |")
    print("|---|---|---|---|---|---|")
    for workers, r in results.items():
        print(
            f"| {workers} | {r['idle_p50']:.1f} | {r['idle_p99']:.1f} | {r['burst_p50']:.1f} "
            f"| {r['burst_p99']:.1f} | {r['jobs_per_s']:.0f} |"
        )
    print()
    print(f"queue latency (create → in_progress) p50 idle: {results[1]['idle_p50']:.1f} ms")
    print(f"jobs/s 2 workers / 1 worker: {results[2]['jobs_per_s'] / results[1]['jobs_per_s']:.2f}")


if __name__ == "__main__":
    main()
