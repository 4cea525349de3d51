"""What tracing costs a served request, counted in instructions rather than timed.

Timed runs on a shared 2-core machine move by several percent between identical servers
(``bench_observability``'s A/A control), more than the 5 % tracing goal leaves. Valgrind's
callgrind counts the instructions a process executes, its threads included, whatever the
machine's load, so two counts of the same work agree to a fraction of a percent.

Each configuration runs the benchmark graphs' app in a child process under callgrind (no HTTP
server: raw ASGI calls, one after another), twice: once with only its start-up and
``--warmup`` requests, once with ``--requests`` more, and the difference divided by
``--requests`` is what one request executes. Metrics are off in both, and the hash seed fixed:

- **off**: no tracer provider;
- **spans, no processor**: an SDK provider without processors (the request path alone);
- **traced**: spans handed to ``service_kit``'s batch processor and exported over OTLP/HTTP to a
  sink this script runs (the exporter's thread included; the child flushes before it exits).

    python -m scripts.count_tracing_instructions              # about 5 minutes on 2 cores
    python -m scripts.count_tracing_instructions --requests 200 --workload stream

Needs valgrind (Debian's ``valgrind`` package). A short do-nothing request runs about 5 M
instructions; under callgrind it takes about 50 times as long as without.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import orjson

CONFIGURATIONS = {
    "off": "off",
    "noproc": "spans, no processor",
    "traced": "traced (OTLP to a sink)",
}
_COLLECTED = re.compile(rb"Collected : (\d+)")


class _Sink(BaseHTTPRequestHandler):
    """An OTLP/HTTP endpoint that takes every batch and keeps nothing."""

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


def count(configuration: str, requests: int, args: argparse.Namespace, endpoint: str) -> int:
    """Instructions callgrind counts for one child run."""
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
    ]
    env = {
        **os.environ,
        "PYTHONHASHSEED": "0",
        "LGOS_METRICS_ENABLED": "false",
        "OTEL_EXPORTER_OTLP_ENDPOINT": endpoint,
    }
    done = subprocess.run(command, env=env, capture_output=True, check=False)
    found = _COLLECTED.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{configuration} ({requests} requests) failed:\n{done.stderr.decode()}")
    return int(found.group(1))


def child(configuration: str, requests: int, warmup: int, workload: str) -> None:
    """Serve ``warmup`` and then ``requests`` requests in this process, traced as asked."""
    import gc

    from opentelemetry import trace

    if configuration != "off":
        from opentelemetry.sdk.trace import TracerProvider

        provider = TracerProvider()
        if configuration == "traced":
            from service_kit.otlp_export import OTLPSpanExporter
            from service_kit.span_queue import QuietBatchSpanProcessor

            provider.add_span_processor(QuietBatchSpanProcessor(OTLPSpanExporter()))
        trace.set_tracer_provider(provider)
    import uvloop
    from lgos.app import create_app
    from lgos_stack.bench.graphs import create_registry

    app = create_app(create_registry())
    body: dict[str, object] = {"model": f"bench-{workload}", "input": "hello"}
    if workload == "stream":
        body["stream"] = True
    raw = orjson.dumps(body)
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
        for _ in range(warmup):
            await one()
        gc.collect()
        gc.freeze()  # as lgos serve does once it has started
        for _ in range(requests):
            await one()
        await inbox.put({"type": "lifespan.shutdown"})
        await lifespan

    uvloop.run(main())
    provider_now = trace.get_tracer_provider()
    flush = getattr(provider_now, "force_flush", None)
    if flush is not None:
        flush()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--requests", type=int, default=400, help="requests counted")
    parser.add_argument("--warmup", type=int, default=300, help="requests before, in both runs")
    parser.add_argument("--workload", choices=("short", "stream"), default="short")
    parser.add_argument("--child", choices=sorted(CONFIGURATIONS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.requests, args.warmup, args.workload)
        return
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed (Debian: apt-get install valgrind)")
    runs = [(name, n) for name in CONFIGURATIONS for n in (0, args.requests)]
    with sink() as endpoint, ThreadPoolExecutor(max(os.cpu_count() or 1, 1)) as pool:
        counts = pool.map(lambda run: count(run[0], run[1], args, endpoint), runs)
        counted = dict(zip(runs, counts, strict=True))
    per_request = {
        name: (counted[(name, args.requests)] - counted[(name, 0)]) / args.requests
        for name in CONFIGURATIONS
    }
    off = per_request["off"]
    print(
        f"\nInstructions a {args.workload} request executes (callgrind; {args.warmup} requests "
        f"to warm up, {args.requests} counted; metrics off)\n"
    )
    print("| configuration | instructions per request | against off |")
    print("|---|---|---|")
    for name, label in CONFIGURATIONS.items():
        against = "-" if name == "off" else f"{100 * (per_request[name] / off - 1):+.1f} %"
        print(f"| {label} | {per_request[name] / 1e6:.3f} M | {against} |")


if __name__ == "__main__":
    main()
