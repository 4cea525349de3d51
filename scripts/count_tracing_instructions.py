"""What tracing and metrics cost a served request, counted in instructions rather than timed.

Timed runs on a shared 2-core machine move by several percent between identical servers
(``bench_observability``'s A/A control), more than the 5 % tracing goal leaves. Valgrind's
callgrind counts the instructions a process executes, its threads included, whatever the
machine's load, so two counts of the same work agree to a fraction of a percent.

Each configuration runs the benchmark graphs' app in a child process under callgrind (no HTTP
server: raw ASGI calls, one after another), twice: once with only its start-up and
``--warmup`` requests, once with ``--requests`` more, and the difference divided by
``--requests`` is what one request executes. The collector is set as ``lgos serve`` sets it, the
hash seed fixed, and every module compiled beforehand. Metrics are off but where named:

- **off**: no tracer provider;
- **metrics (no tracing)**: ``LGOS_METRICS_ENABLED=true``, LGOS's default;
- **spans, no processor**: an SDK provider without processors (the request path alone);
- **traced**: spans handed to ``service_kit``'s batch processor and exported over OTLP/HTTP to a
  sink this script runs (the exporter's thread included). Batches are sent when full, as under
  load; 512 counted requests make exactly three more.

- **graph**: no LGOS at all: the benchmark graph run in-process as ``bench_serving``'s
  in-process side runs it (``ainvoke``; ``astream`` of messages for the stream). Its count
  against LGOS's default (metrics) is ``bench_serving``'s ratio in instructions, checked
  against the same goals (short ≥ 0.75, stream ≥ 0.9).

A dead exporter is not counted: its retries and back-off run on the clock, and under callgrind a
request takes fifty times as long, so it would be charged fifty times its retries.

``--served`` serves the app with uvicorn as ``lgos serve`` does and sends the requests over one
kept-alive socket from this process (not counted): the request as a served process executes it.

    python -m scripts.count_tracing_instructions --served     # about 12 minutes on 2 cores
    python -m scripts.count_tracing_instructions --workload stream --warmup 50 --requests 64
    python -m scripts.count_tracing_instructions --served --only metrics   # off and metrics
    python -m scripts.count_tracing_instructions --served --only metrics graph  # serving ratio
    python -m scripts.count_tracing_instructions --only metrics graph --concurrency 64 \
        --warmup 128   # the same 64 at a time, in-process

It ends with the goals ``bench_observability`` checks in time (metrics alone ≤ 2 %, tracing
≤ 5 %) checked against the counts; ``make bench-observability`` runs it ``--served`` after the
timed runs. Needs valgrind (Debian's ``valgrind`` package, which that target installs). A
short do-nothing request runs about 5 M instructions; under callgrind it takes about 50 times as
long as without.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator, Mapping, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson
from lgos_stack.bench.observability_goals import counted_goals
from lgos_stack.bench.serving import SHORT_GOAL, STREAM_GOAL
from lgos_stack.ports import free_port
from lgos_stack.processes import Wait, tcp_open, wait_for

CONFIGURATIONS = {
    "off": "off",
    "metrics": "metrics (no tracing)",
    "noproc": "spans, no processor",
    "traced": "traced (OTLP to a sink)",
    "graph": "the graph alone, in-process",
}
_COLLECTED = re.compile(rb"Collected : (\d+)")


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes every batch and keeps nothing, on one kept-alive
    connection as a collector's or Phoenix's server keeps it."""

    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.send_response(200)
        self.send_header("content-type", "application/x-protobuf")
        self.send_header("content-length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def sink() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Sink)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()


def _env(configuration: str, endpoint: str) -> dict[str, str]:
    return {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "LGOS_METRICS_ENABLED": str(configuration == "metrics").lower(),
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
        # Batches go out when full, as they do under load (a served process fills 512 spans in
        # well under a second), never on the five-second timer: under callgrind a request takes
        # fifty times as long, so the timer would send many small batches, as many as the
        # machine's load makes the run last.
        "OTEL_BSP_SCHEDULE_DELAY": str(3_600_000),
    }


def _body(workload: str) -> bytes:
    body: dict[str, object] = {"model": f"bench-{workload}", "input": "hello"}
    if workload == "stream":
        body["stream"] = True
    return orjson.dumps(body)


def _drive(port: int, requests: int, workload: str) -> None:
    """Send ``requests`` requests one after another on one kept-alive connection, each read to
    its end (the whole body, or the last chunk of a stream)."""
    raw = _body(workload)
    request = (
        b"POST /v1/responses HTTP/1.1\r\nhost: bench\r\ncontent-type: application/json\r\n"
        + b"content-length: %d\r\n\r\n" % len(raw)
        + raw
    )
    with socket.create_connection(("127.0.0.1", port)) as connection:
        reader = connection.makefile("rb")
        for _ in range(requests):
            connection.sendall(request)
            status = reader.readline()
            if b" 200 " not in status:
                raise SystemExit(f"the server answered {status!r}")
            length, chunked = 0, False
            while (line := reader.readline()) not in (b"\r\n", b""):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
                elif name.strip().lower() == b"transfer-encoding":
                    chunked = b"chunked" in value.lower()
            if not chunked:
                reader.read(length)
                continue
            while size := int(reader.readline().split(b";")[0], 16):
                reader.read(size + 2)
            reader.readline()


def count(configuration: str, requests: int, args: argparse.Namespace, endpoint: str) -> int:
    """Instructions callgrind counts for one child run."""
    served = args.served and configuration != "graph"
    port = free_port() if served else 0
    command = [
        "valgrind",
        "--tool=callgrind",
        "--callgrind-out-file=/dev/null",
        sys.executable,
        "-m",
        "scripts.count_tracing_instructions",
        "--child",
        configuration,
        "--requests",
        str(requests),
        "--warmup",
        str(args.warmup),
        "--workload",
        args.workload,
        "--port",
        str(port),
        "--concurrency",
        str(args.concurrency),
    ]
    if not served:
        done = subprocess.run(
            command, env=_env(configuration, endpoint), capture_output=True, check=False
        )
        returncode, stderr = done.returncode, done.stderr
    else:
        server = subprocess.Popen(
            command,
            env=_env(configuration, endpoint),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        try:
            if wait_for(lambda: tcp_open(port), server, timeout=1800) is not Wait.READY:
                server.kill()
                raise SystemExit(
                    f"the served app did not listen:\n{server.communicate()[1].decode()}"
                )
            _drive(port, args.warmup + requests, args.workload)
        finally:
            server.send_signal(signal.SIGTERM)  # uvicorn's graceful stop; then the flush
        stderr = server.communicate()[1]
        # uvicorn raises SIGTERM again once it has stopped (see child).
        returncode = 0 if server.returncode == -signal.SIGTERM else server.returncode
    found = _COLLECTED.search(stderr)
    if returncode != 0 or found is None:
        raise SystemExit(f"{configuration} ({requests} requests) failed:\n{stderr.decode()}")
    return int(found.group(1))


async def in_flight(one: Callable[[], Awaitable[None]], requests: int, concurrency: int) -> None:
    """``requests`` calls of ``one``, ``concurrency`` at a time (as many tasks, each calling it
    one call after another)."""

    async def task(calls: int) -> None:
        for _ in range(calls):
            await one()

    share, extra = divmod(requests, concurrency)
    await asyncio.gather(*(task(share + (i < extra)) for i in range(concurrency)))


def child(
    configuration: str, requests: int, warmup: int, workload: str, port: int, concurrency: int
) -> None:
    """Serve ``warmup`` and then ``requests`` requests in this process, traced as asked: called
    with raw ASGI messages, or with ``port`` served by uvicorn as ``lgos serve`` serves it (the
    requests then come from the parent)."""
    if configuration == "graph":
        graph_alone(requests, warmup, workload, concurrency)
        return
    from opentelemetry import trace

    if configuration in ("noproc", "traced"):
        from opentelemetry.sdk.trace import TracerProvider

        provider = TracerProvider()
        if configuration == "traced":
            from service_kit.otlp_export import OTLPSpanExporter
            from service_kit.span_queue import QuietBatchSpanProcessor

            provider.add_span_processor(QuietBatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    import uvloop
    from lgos.app import create_app
    from lgos.gc_tuning import tune_collector
    from lgos.protocol import sse
    from lgos.settings import LGOSSettings
    from lgos_stack.bench.graphs import create_registry

    # The stream's writes are coalesced within a window on the clock, and under callgrind the
    # clock runs fifty times slower than the work: how many events a write joins would follow
    # each configuration's speed. With no window, every configuration writes the same way.
    sse.COALESCE_WINDOW = 0.0
    app = create_app(create_registry())
    if port:
        from service_kit.serve import serve

        tune_collector(LGOSSettings().gc_thresholds)  # as lgos serve does, before it serves
        # Until SIGTERM, which uvicorn raises again once it has stopped: the process ends
        # there, without a flush. The batches sent are the full ones; with 512 counted requests
        # both runs leave the same 388 spans unsent.
        serve(app, host="127.0.0.1", port=port, log_level="warning")
        return
    raw = _body(workload)
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/v1/responses",
        "raw_path": b"/v1/responses",
        "query_string": b"",
        "root_path": "",
        "headers": [
            (b"host", b"bench"),
            (b"content-type", b"application/json"),
            (b"content-length", str(len(raw)).encode()),
        ],
        "client": ("127.0.0.1", 1),
        "server": ("127.0.0.1", 80),
    }

    async def one() -> None:
        sent = False
        status: list[int] = []

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": raw, "more_body": False}
            await asyncio.Event().wait()  # the client never disconnects
            raise AssertionError("unreachable")

        async def send(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start":
                status.append(message["status"])

        await app(dict(scope), receive, send)
        if status != [200]:
            raise SystemExit(f"the app answered {status}")

    async def main() -> None:
        inbox: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        outbox: asyncio.Queue[MutableMapping[str, Any]] = asyncio.Queue()
        await inbox.put({"type": "lifespan.startup"})
        lifespan = asyncio.create_task(
            app({"type": "lifespan", "asgi": {"version": "3.0"}}, inbox.get, outbox.put)
        )
        started = await outbox.get()
        if started["type"] != "lifespan.startup.complete":
            raise SystemExit(f"the app did not start: {started}")
        await in_flight(one, warmup, concurrency)
        # The collector as lgos serve sets it (its thresholds, what exists frozen), after the
        # warm-up so that its caches are frozen too.
        tune_collector(LGOSSettings().gc_thresholds)
        await in_flight(one, requests, concurrency)
        await inbox.put({"type": "lifespan.shutdown"})
        await lifespan

    uvloop.run(main())
    _flush()


def graph_alone(requests: int, warmup: int, workload: str, concurrency: int) -> None:
    """The benchmark graph run in-process by ``bench_serving``'s own in-process worker."""
    import uvloop
    from lgos.gc_tuning import tune_collector
    from lgos.settings import LGOSSettings
    from lgos_stack.bench.serving import in_process_workers

    worker = in_process_workers()[workload]()

    async def one() -> None:
        sample = await worker()
        if workload == "stream" and not sample.deltas:
            raise SystemExit("the graph streamed no text")

    async def main() -> None:
        await in_flight(one, warmup, concurrency)
        tune_collector(LGOSSettings().gc_thresholds)  # as on the served side
        await in_flight(one, requests, concurrency)

    uvloop.run(main())


def _flush() -> None:
    from opentelemetry import trace

    flush = getattr(trace.get_tracer_provider(), "force_flush", None)
    if flush is not None:
        flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument(
        "--requests",
        type=int,
        default=512,
        help="requests counted (512: their spans make whole batches of 512, as under load)",
    )
    parser.add_argument("--warmup", type=int, default=300, help="requests before, in both runs")
    parser.add_argument("--workload", choices=("short", "stream"), default="short")
    parser.add_argument(
        "--served",
        action="store_true",
        help="count the app served by uvicorn (as lgos serve runs it), the requests sent over a "
        "socket by this process, instead of called in-process",
    )
    parser.add_argument(
        "--only",
        nargs="+",
        choices=sorted(set(CONFIGURATIONS) - {"off"}),
        help="count these configurations (and off, the baseline) rather than all",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=1,
        help="requests in flight at a time in-process (the app or the graph alone called by as "
        "many tasks); served counts send one request at a time",
    )
    parser.add_argument("--child", choices=sorted(CONFIGURATIONS), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.requests, args.warmup, args.workload, args.port, args.concurrency)
        return
    if args.concurrency < 1 or (args.served and args.concurrency != 1):
        parser.error("--concurrency is a positive number, and 1 with --served")
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    names = [name for name in CONFIGURATIONS if not args.only or name in {"off", *args.only}]
    runs = [(name, n) for name in names for n in (0, args.requests)]
    with sink() as endpoint, ThreadPoolExecutor(max(os.cpu_count() or 1, 1)) as pool:
        # One run of each configuration outside callgrind first, so that every counted run finds
        # the bytecode compiled: two runs compiling a changed module side by side differ.
        for name in names:
            subprocess.run(
                [
                    *(sys.executable, "-m", "scripts.count_tracing_instructions"),
                    *("--child", name, "--requests", "0", "--warmup", "1"),
                    *("--workload", args.workload),
                ],
                env=_env(name, endpoint),
                check=True,
                capture_output=True,
            )
        counts = pool.map(lambda run: count(run[0], run[1], args, endpoint), runs)
        counted = dict(zip(runs, counts, strict=True))
    per_request = {
        name: (counted[(name, args.requests)] - counted[(name, 0)]) / args.requests
        for name in names
    }
    print_counts(per_request, args)


def print_counts(per_request: Mapping[str, float], args: argparse.Namespace) -> None:
    off = per_request["off"]
    print(
        f"\nInstructions a {args.workload} request executes "
        f"({'served by uvicorn' if args.served else 'the app called in-process'}; callgrind; "
        f"{args.concurrency} at a time, {args.warmup} requests "
        f"to warm up, {args.requests} counted; metrics off but where named)\n"
    )
    print("| configuration | instructions per request | against off |")
    print("|---|---|---|")
    for name, count in per_request.items():
        against = "-" if name == "off" else f"{100 * (count / off - 1):+.1f} %"
        print(f"| {CONFIGURATIONS[name]} | {count / 1e6:.3f} M | {against} |")
    graph = per_request.get("graph")
    if graph is not None:
        served, how = per_request["off"], "metrics off"
        if "metrics" in per_request:
            served, how = per_request["metrics"], "metrics on, LGOS's default"
        target = SHORT_GOAL if args.workload == "short" else STREAM_GOAL
        ratio = graph / served
        print(
            f"\nServing ratio in instructions, the graph alone / a request served ({how}): "
            f"{ratio:.3f}, goal ≥ {target}: {'met' if ratio >= target else 'NOT met'}"
        )
    rows = counted_goals(per_request)
    if rows:
        print("\n| goal | counted | limit | met |\n|---|---|---|---|")
        for goal, counted, limit, met in rows:
            print(f"| {goal} | {counted} | {limit} | {'yes' if met else 'NO'} |")


if __name__ == "__main__":
    main()
