"""Scale of LGOS: a thousand concurrent streams on a slow model, on one process or several.

One ``lgos serve`` (``--pin``: on one core of its own; ``--processes N``: ``--workers N``, the
processes sharing PostgreSQL and Redis as a deployment's do) holds ``--streams`` streaming Responses
open against an offline-model that sends one token every 200 ms (``OFFLINE_MODEL_TOKEN_DELAY``).
While all of them are open it measures:

- RSS per open stream: (RSS with every stream open - RSS before) / streams, over every LGOS
  process;
- event-loop lag, from LGOS's own opt-in probe (``LGOS_LOOP_LAG_INTERVAL``: a task that sleeps
  50 ms again and again and logs how late it woke, p50/p99/max per 1 s window, in every
  process); the figure is the worst window's p99 while the streams were all open;
- time to first delta of new requests arriving meanwhile, on a graph whose model (a second,
  unpaced offline-model) answers at once, so the figure is LGOS's own delay under that load.

Every stream's text must equal the offline-model's deterministic answer to its own input. The
load generator (one process, uvloop, raw asyncio connections) and both offline-model processes
run on the other core.

    make bench-load    # or: uv run python -m scripts.bench_scale --streams 1000
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import orjson
import psutil
from lgos_stack.bench.graphs import SCALE_REGISTRY
from lgos_stack.bench.load_client import (
    OpenStreams,
    RSSMeter,
    StreamResult,
    output_text,
    settle,
    stream_response,
)
from lgos_stack.bench.machine import install_uvloop, load_average, raise_fd_limit
from lgos_stack.bench.report import Check, print_checks
from lgos_stack.bench.serving import Cell, Connection, drive
from lgos_stack.bench.stats import percentile_ms
from lgos_stack.ports import free_port
from lgos_stack.processes import Server, serve

TOKEN_DELAY = 0.2
# A saturated process is slow, not broken: on a busy shared machine the run took 205 s.
GIVE_UP_AFTER = 900.0
FILLER = " ".join(f"word{i}" for i in range(200))
THROUGHPUT_CONCURRENCY = 64


def prompt(label: str, words: int) -> str:
    return f"{label}: " + " ".join(FILLER.split()[:words])


def shared_state(processes: int, postgres: str, redis: str) -> dict[str, str]:
    """What several processes need to share: PostgreSQL, Redis, the distributed background
    engine (the registry has a background graph); nothing for one."""
    if processes == 1:
        return {}
    return {
        "LGOS_POSTGRES_URI": postgres,
        "LGOS_REDIS_URL": redis,
        "LGOS_BACKGROUND": "distributed",
    }


@contextmanager
def stack(
    state: Path,
    lgos_core: int | None,
    others: set[int] | None,
    processes: int = 1,
    shared: dict[str, str] | None = None,
) -> Iterator[Server]:
    with ExitStack() as stack:
        models = {}
        for name, delay in (("slow", TOKEN_DELAY), ("fast", 0.0)):
            port = free_port()
            models[name] = stack.enter_context(
                serve(
                    ["offline_model", "--port", str(port)],
                    port=port,
                    # The echo answer quotes the whole input: each stream's parity reference.
                    env={"OFFLINE_MODEL_TOKEN_DELAY": str(delay), "OFFLINE_MODEL_ECHO": "true"},
                    log=state / f"model-{name}.log",
                )
            )
            if others:
                os.sched_setaffinity(models[name].process.pid, others)
        port = free_port()
        lgos = stack.enter_context(
            serve(
                ["lgos", "serve", SCALE_REGISTRY, "--port", str(port), "--workers", str(processes)],
                port=port,
                env={
                    **(shared or {}),
                    "BENCH_SLOW_MODEL_URL": f"{models['slow'].url}/v1",
                    "BENCH_FAST_MODEL_URL": f"{models['fast'].url}/v1",
                    "LGOS_STATE_DIR": str(state / "lgos"),
                    "LGOS_LOG_LEVEL": "info",
                    "LGOS_LOOP_LAG_INTERVAL": "0.05",
                    "LGOS_LOOP_LAG_REPORT_EVERY": "1",
                },
                log=state / "lgos.log",
            )
        )
        if lgos_core is not None:
            os.sched_setaffinity(lgos.process.pid, {lgos_core})
        yield lgos


def collector(log: Path) -> str:
    """LGOS's collector set-up, from its start-up log line (LGOS_GC_THRESHOLDS)."""
    for line in log.read_bytes().splitlines():
        if b'"collector tuned"' in line:
            tuned = orjson.loads(line)
            return f"thresholds {tuple(tuned['thresholds'])}, {tuned['frozen']} objects frozen"
    return "not reported"


def cpu_seconds(process: psutil.Process) -> float:
    """CPU time of ``process`` and its descendants (the server processes of ``--workers``)."""
    total = 0.0
    for one in (process, *process.children(recursive=True)):
        try:
            times = one.cpu_times()
        except psutil.NoSuchProcess:
            continue
        total += times.user + times.system
    return total


def lag_windows(log: Path) -> list[dict[str, Any]]:
    windows = []
    for line in log.read_bytes().splitlines():
        if b'"event loop lag"' in line:
            windows.append(orjson.loads(line))
    return windows


async def reference(port: int, text: str, fast: str) -> str:
    """The model's answer to ``text`` (unpaced graph): the parity reference."""
    result = await stream_response(port, {"model": fast, "input": text})
    if not result.ok or result.response is None:
        raise SystemExit(f"reference request failed: {result.error}")
    return output_text(result.response)


def parity(result: StreamResult, expected: str) -> bool:
    final = output_text(result.response) if result.response else None
    return result.ok and result.text == expected and final == expected


async def probe_new_requests(port: int, count: int, gap: float, fast: str) -> list[StreamResult]:
    """New streaming requests, one at a time, on the unpaced graph."""
    results = []
    for i in range(count):
        results.append(await stream_response(port, {"model": fast, "input": f"probe {i}: hello"}))
        await asyncio.sleep(gap)
    return results


async def throughput(port: int, fast: str, seconds: float) -> dict[str, Cell]:
    """Requests a second at concurrency 64 on the unpaced graph, once the streams are done: one
    keep-alive connection per worker, a short non-streaming answer and the same streamed."""
    cells = {}
    for workload, stream in (("short", False), ("stream", True)):
        body = orjson.dumps({"model": fast, "input": "hello", "stream": stream})
        connections = [Connection(port) for _ in range(THROUGHPUT_CONCURRENCY)]
        workers = [functools.partial(c.request, body) for c in connections]
        await drive(workers[:4], 1.0)  # warm-up
        cells[workload] = await drive(workers, seconds)
        for connection in connections:
            connection.close()
    return cells


async def run(
    server: Server, streams: int, words: int, probes: int, kind: str, seconds: float
) -> dict[str, Any]:
    port = int(server.url.rsplit(":", 1)[1])
    slow, fast = f"slow-{kind}", f"fast-{kind}"
    base_input = prompt("stream reference", words)
    template = await reference(port, base_input, fast)
    if kind == "chat" and base_input not in template:
        raise SystemExit("the offline-model's answer does not quote its input")
    for i in range(3):  # warm-up: imports, connection pools, first-call caches
        await stream_response(port, {"model": slow, "input": f"warm {i}"})
    idle = await probe_new_requests(port, probes, 0.05, fast)

    open_streams = OpenStreams()
    meter = RSSMeter(server.process.pid, open_streams)
    await asyncio.sleep(1.0)
    rss_before = meter.now()
    lag_before = len(lag_windows(server.log))
    meter.start()
    process = psutil.Process(server.process.pid)
    cpu_started = cpu_seconds(process)
    started = time.perf_counter()
    inputs = [prompt(f"stream {i}", words) for i in range(streams)]
    tasks = [
        asyncio.create_task(
            stream_response(
                port,
                {"model": slow, "input": text},
                open_streams=open_streams,
                give_up_after=GIVE_UP_AFTER,
            )
        )
        for text in inputs
    ]
    # Held: every stream has had its first delta (the model call is under way), none ended.
    while open_streams.started < streams and not any(t.done() for t in tasks):  # noqa: ASYNC110
        await asyncio.sleep(0.02)
    all_open_after = time.perf_counter() - started
    hold_from = len(lag_windows(server.log))
    hold_started, cpu_hold_started = time.perf_counter(), cpu_seconds(process)
    rss_held = meter.now()
    held_count = open_streams.streaming
    during = await probe_new_requests(port, probes, 0.1, fast)
    still_open = open_streams.streaming
    # The lag figure covers the whole hold: until the first stream has its answer.
    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    hold_to = len(lag_windows(server.log))
    hold_busy = (cpu_seconds(process) - cpu_hold_started) / (time.perf_counter() - hold_started)
    results = await asyncio.gather(*tasks)
    elapsed = time.perf_counter() - started
    cpu_run = cpu_seconds(process) - cpu_started
    await meter.stop()
    rss_after = await settle(meter)
    windows = lag_windows(server.log)
    cells = await throughput(port, fast, seconds) if seconds > 0 else {}
    return {
        "results": results,
        "expected": [template.replace(base_input, text) for text in inputs],
        "kind": kind,
        "idle": idle,
        "during": during,
        "rss_before": rss_before,
        "rss_held": rss_held,
        "rss_peak": meter.peak,
        "rss_after": rss_after,
        "held_count": held_count,
        "still_open": still_open,
        "all_open_after": all_open_after,
        "elapsed": elapsed,
        "lag_idle": windows[max(0, lag_before - 5) : lag_before],
        "lag_held": windows[hold_from + 1 : hold_to] or windows[hold_from : hold_to + 1],
        "load": load_average(),
        "collector": collector(server.log),
        "hold_busy": hold_busy,
        "cpu_per_delta": cpu_run / max(1, sum(r.deltas for r in results)),
        "throughput": cells,
    }


def memory_limit_kb(processes: int) -> int:
    """The goal per open stream: 100 KB in one process, 120 KB spread over several."""
    return 100 if processes == 1 else 120


def report(figures: dict[str, Any], streams: int, loop_name: str) -> bool:
    results: list[StreamResult] = figures["results"]
    completed = sum(r.ok for r in results)
    matching = sum(parity(r, e) for r, e in zip(results, figures["expected"], strict=True))
    errors = sorted({r.error or f"status {r.status}" for r in results if not r.ok})
    during: list[StreamResult] = figures["during"]
    idle: list[StreamResult] = figures["idle"]
    ttfd_new = [r.ttfd for r in during if r.ttfd is not None]
    ttfd_idle = [r.ttfd for r in idle if r.ttfd is not None]
    ttfd_held = [r.ttfd for r in results if r.ttfd is not None]
    held = figures["held_count"]
    per_stream_kb = (figures["rss_held"] - figures["rss_before"]) * 1024 / max(1, held)
    held_p99 = [w.get("p99_ms", 0.0) for w in figures["lag_held"]]
    idle_p99 = [w.get("p99_ms", 0.0) for w in figures["lag_idle"]]
    lag_p99 = max(held_p99, default=float("nan"))
    new_ok = all(r.ok for r in during)
    model = {"chat": "offline-model (ChatOpenAI)", "fake": "an in-process FAKE model"}
    processes = figures.get("processes", 1)
    served_by = "one LGOS process" if processes == 1 else f"{processes} LGOS processes"
    print(
        f"\nScale of {served_by}: {streams} concurrent streams, {model[figures['kind']]} "
        f"paced at one token every {TOKEN_DELAY * 1000:.0f} ms; load generator on {loop_name}; "
        f"load average (1/5/15 min) at the end: {figures['load']}\n"
    )
    print("| figure | value |\n|---|---|")
    rows = [
        ("streams completed / with text parity", f"{completed} / {matching} of {streams}"),
        ("errors", "; ".join(errors[:3]) or "none"),
        ("LGOS garbage collector", figures["collector"]),
        ("all streams streaming (first delta) after", f"{figures['all_open_after']:.1f} s"),
        ("streams streaming while measuring (start / end)", f"{held} / {figures['still_open']}"),
        ("whole run", f"{figures['elapsed']:.1f} s"),
        (
            "LGOS RSS before / all open / peak / after",
            (
                f"{figures['rss_before']:.0f} / {figures['rss_held']:.0f} / "
                f"{figures['rss_peak']:.0f} / {figures['rss_after']:.0f} MiB"
            ),
        ),
        ("RSS per open stream", f"{per_stream_kb:.0f} KB"),
        (
            "LGOS CPU while all open / per streamed delta",
            f"{figures['hold_busy'] * 100:.0f} % of a core / "
            f"{figures['cpu_per_delta'] * 1e6:.0f} µs "
            "(the whole run: starts, ends and probes included)",
        ),
        (
            "held streams' TTFD p50 / p99",
            f"{percentile_ms(ttfd_held, 0.5):.0f} / {percentile_ms(ttfd_held, 0.99):.0f} ms "
            "(includes the model's 200 ms pacing)",
        ),
        (
            "loop lag p99 per 1 s window, idle (worst)",
            f"{max(idle_p99, default=float('nan')):.1f} ms",
        ),
        (
            "loop lag p99 per 1 s window, all open (median / worst)",
            (
                f"{percentile_ms([v / 1000 for v in held_p99], 0.5):.1f} / {lag_p99:.1f} ms "
                f"over {len(held_p99)} windows"
            ),
        ),
        (
            "new-request TTFD idle p50 / p99",
            f"{percentile_ms(ttfd_idle, 0.5):.1f} / {percentile_ms(ttfd_idle, 0.99):.1f} ms",
        ),
        (
            "new-request TTFD under load p50 / p99",
            f"{percentile_ms(ttfd_new, 0.5):.1f} / {percentile_ms(ttfd_new, 0.99):.1f} ms "
            f"({len(during)} requests)",
        ),
    ]
    for workload, cell in figures["throughput"].items():
        rows.append(
            (
                f"throughput at c={THROUGHPUT_CONCURRENCY}, {workload} answers "
                f"({figures['kind']} model)",
                f"{cell.rps:,.0f} req/s (p50 {cell.latency(0.5):.0f} ms, "
                f"{len(cell.answered)} in {cell.elapsed:.1f} s)",
            )
        )
    for name, value in rows:
        print(f"| {name} | {value} |")
    checks = [
        Check(
            "every stream completed, text parity",
            f"{matching} / {streams}",
            "all",
            matching == streams,
        ),
        Check(
            "new requests under load completed",
            f"{sum(r.ok for r in during)} / {len(during)}",
            "all",
            new_ok,
        ),
        # Each further process holds its own copy of the graphs and libraries.
        Check(
            "RSS per open stream",
            f"{per_stream_kb:.0f} KB",
            f"≤ {memory_limit_kb(processes)} KB",
            per_stream_kb <= memory_limit_kb(processes),
        ),
        Check(
            "event-loop lag p99 (worst 1 s window)", f"{lag_p99:.1f} ms", "≤ 20 ms", lag_p99 <= 20
        ),
        Check(
            "new-request TTFD p50",
            f"{percentile_ms(ttfd_new, 0.5):.1f} ms",
            "≤ 50 ms",
            percentile_ms(ttfd_new, 0.5) <= 50,
        ),
    ]
    return print_checks(checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--streams", type=int, default=1000, help="concurrent slow streams")
    parser.add_argument("--words", type=int, default=60, help="input words (answer length)")
    parser.add_argument("--probes", type=int, default=20, help="new requests while held")
    parser.add_argument(
        "--pin",
        action="store_true",
        help="pin LGOS to one core and the rest to the others (on a machine of one's own: on a "
        "shared one, pinning ties LGOS to a core other work may be saturating)",
    )
    parser.add_argument(
        "--model",
        choices=("chat", "fake"),
        default="chat",
        help="chat: offline-model over HTTP via ChatOpenAI; fake: an in-process FAKE model",
    )
    parser.add_argument(
        "--processes",
        type=int,
        default=1,
        help="LGOS server processes (lgos serve --workers); above 1 they share PostgreSQL and "
        "Redis and --pin is ignored",
    )
    parser.add_argument(
        "--postgres",
        default="postgresql://postgres@127.0.0.1:5432/postgres",
        help="PostgreSQL the processes share (with --processes above 1)",
    )
    parser.add_argument(
        "--redis",
        default="redis://127.0.0.1:6379/14",
        help="Redis the processes share (with --processes above 1)",
    )
    parser.add_argument(
        "--throughput-seconds",
        type=float,
        default=5.0,
        help=f"then requests/s at concurrency {THROUGHPUT_CONCURRENCY} for this long per "
        "workload (0: skip)",
    )
    parser.add_argument(
        "--logs", type=Path, help="keep the servers' logs in this folder (default: a temp one)"
    )
    args = parser.parse_args()
    loop_name = install_uvloop()
    raise_fd_limit(4 * args.streams + 256)
    cores = sorted(os.sched_getaffinity(0))
    pin = args.pin and len(cores) > 1 and args.processes == 1
    lgos_core, others = (cores[0], set(cores[1:])) if pin else (None, None)
    if others:
        os.sched_setaffinity(0, others)
    with ExitStack() as logs:
        if args.logs is not None:
            args.logs.mkdir(parents=True, exist_ok=True)
            folder = args.logs
        else:
            folder = Path(logs.enter_context(tempfile.TemporaryDirectory(prefix="bench-scale-")))
        shared = shared_state(args.processes, args.postgres, args.redis)
        with stack(folder, lgos_core, others, args.processes, shared) as server:
            figures = asyncio.run(
                run(
                    server,
                    args.streams,
                    args.words,
                    args.probes,
                    args.model,
                    args.throughput_seconds,
                )
            )
        figures["processes"] = args.processes
        report(figures, args.streams, loop_name)


if __name__ == "__main__":
    main()
