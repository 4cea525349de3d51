"""What metrics and tracing cost a served request, and what a dead trace exporter costs.

Three ``lgos serve`` of the benchmark graphs (a fake streaming chat model, no network) per
configuration (``--processes``), all pinned to one core, taking the rounds in turn: two processes
of one configuration differ by several percent on this machine, so one process per configuration
would measure that difference as much as the configuration's cost. The load generator (the lean
keep-alive client of ``bench_serving``) and Phoenix run on the other core:

- **off**: ``LGOS_METRICS_ENABLED=false``, no ``OTEL_*`` variables;
- **metrics**: the defaults (Prometheus metrics recorded, no tracing);
- **metrics + tracing**: also ``OTEL_EXPORTER_OTLP_ENDPOINT`` at a running Phoenix (from
  ``.tools/phoenix``, offline, as the stack starts it), spans exported over OTLP/HTTP;
- **dead exporter**: the same, at a port where nothing listens (Phoenix down);
- **off (A/A)**: a second "off" server, the control: its "cost" is the noise of the machine.

Workloads: a short non-streaming answer and a 200-chunk streamed answer (``POST /v1/responses``),
at concurrency 1 and 16. ``--graph chat`` serves the demo's own model path instead: a graph
calling ``ChatOpenAI`` (the demo graphs' model client) on an offline-model process (on the load
generator's core), so each request also makes the HTTP call, streaming and parsing a real model
client pays for. Every round runs each cell on every configuration, in an order rotated
each round, so drift on a shared machine hits all of them alike. A request fails when it gets
no 200, its connection breaks, or its stream is short of deltas.

    make bench-observability                        # both graphs, about 18 minutes
    python -m scripts.bench_observability --seconds 2 --rounds 3 --graph chat
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import orjson
import psutil
from lgos_stack.bench.graphs import REGISTRY, SCALE_REGISTRY, STREAM_CHUNKS
from lgos_stack.bench.machine import install_uvloop
from lgos_stack.bench.observability_goals import METRICS_GOAL, TRACING_GOAL
from lgos_stack.bench.serving import Cell, Connection, Sample, drive, start_server
from lgos_stack.paths import PHOENIX_BIN
from lgos_stack.ports import free_port
from lgos_stack.processes import serve
from lgos_stack.servers import phoenix_env, require

WORKLOADS = ("short", "stream")
GRAPHS = {
    "bench": {"short": "bench-short", "stream": "bench-stream"},
    "chat": {"short": "fast-chat", "stream": "fast-chat"},
}
"""The model each workload asks for: the benchmark graphs (a fake model in the process) or the
ChatOpenAI graph of the scale registry (on an offline-model process)."""
CHAT_INPUT = "Summarise what a trace of this request holds, in a few short sentences."
CONCURRENCY = (1, 16)
PROJECT = "lgos-bench"
"""Phoenix's project the traced configurations' spans land in."""
SPANS_PER_REQUEST = 3
"""The server span, ``invoke_workflow`` and the graph's one ``chat``."""


@dataclass(frozen=True)
class Config:
    name: str
    env: dict[str, str]


@dataclass(frozen=True)
class Server:
    port: int
    pid: int


@dataclass
class Target:
    """One configuration, served by ``servers`` in turn: round ``n`` goes to server
    ``n % len(servers)``."""

    config: Config
    servers: list[Server]
    graph: str = "bench"
    cells: dict[tuple[str, int], list[Cell]] = field(default_factory=dict)
    cpu: dict[tuple[str, int], list[float]] = field(default_factory=dict)
    warm_failures: int = 0
    requests: int = 0
    turn: int = 0
    served: dict[int, int] = field(default_factory=dict)
    """Requests sent to each server (by pid) in the measured rounds."""

    @property
    def server(self) -> Server:
        return self.servers[self.turn % len(self.servers)]

    def worker(self, workload: str) -> Callable[[], Awaitable[Sample]]:
        prompt = CHAT_INPUT if self.graph == "chat" else "hello"
        body: dict[str, object] = {"model": GRAPHS[self.graph][workload], "input": prompt}
        if workload == "stream":
            body["stream"] = True
        # The fake model streams a known number of chunks; offline-model's answer, at least one.
        expected = STREAM_CHUNKS if self.graph == "bench" else None
        raw = orjson.dumps(body)
        connection = Connection(self.server.port)

        async def request() -> Sample:
            self.requests += 1
            started = time.perf_counter()
            try:
                sample = await connection.request(raw)
            except (OSError, RuntimeError, ValueError, asyncio.IncompleteReadError):
                connection.close()
                return Sample(time.perf_counter() - started, failed=True)
            short = sample.deltas != expected if expected is not None else not sample.deltas
            if workload == "stream" and short:
                connection.close()
                sample.failed = True
            return sample

        return request

    def merged(self, workload: str, concurrency: int) -> Cell:
        cells = self.cells[(workload, concurrency)]
        return Cell([s for c in cells for s in c.samples], sum(c.elapsed for c in cells))

    def cpu_ms(self, workload: str, concurrency: int) -> float:
        """Server CPU milliseconds per answered request over every round of one cell."""
        answered = len(self.merged(workload, concurrency).answered)
        return 1000 * sum(self.cpu[(workload, concurrency)]) / max(answered, 1)

    def failures(self) -> int:
        return self.warm_failures + sum(c.failures for cs in self.cells.values() for c in cs)


def configs(phoenix_port: int, dead_port: int) -> list[Config]:
    def traced(port: int, name: str) -> dict[str, str]:
        return {
            "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}",
            "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
            "OTEL_SERVICE_NAME": name,
            "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={PROJECT}",
        }

    off = {"LGOS_METRICS_ENABLED": "false"}
    return [
        Config("off", off),
        Config("metrics", {}),
        Config("metrics + tracing", traced(phoenix_port, "lgos-bench-tracing")),
        Config("dead exporter", traced(dead_port, "lgos-bench-dead")),
        Config("off (A/A)", off),
    ]


def server_cpu(pid: int) -> float:
    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


# --- running ---------------------------------------------------------------------------------


@contextmanager
def phoenix(port: int, state: Path, core: int) -> Iterator[str]:
    """Phoenix as the stack starts it (offline, loopback), on ``core`` at a lower priority: it
    ingests spans beside the load generator, which keeps precedence."""
    require(PHOENIX_BIN, "Phoenix", "phoenix")

    def pin() -> None:
        os.sched_setaffinity(0, {core})
        os.nice(10)

    with serve(
        ["phoenix"],
        command=[str(PHOENIX_BIN), "serve"],
        port=port,
        env=phoenix_env(port, state / "phoenix"),
        log=state / "phoenix.log",
        timeout=600,  # a first start migrates its database: minutes on a loaded machine
        health_path="/healthz",
        preexec_fn=pin,
    ) as server:
        yield server.url


@contextmanager
def offline_model(state: Path, core: int) -> Iterator[dict[str, str]]:
    """An unpaced offline-model on ``core`` (the load generator's): the variables that point the
    scale registry's ``fast-chat`` graph at it."""
    port = free_port()
    with serve(
        ["offline_model", "--port", str(port)],
        port=port,
        env={"OFFLINE_MODEL_TOKEN_DELAY": "0"},
        log=state / "offline-model.log",
    ) as model:
        os.sched_setaffinity(model.process.pid, {core})
        url = f"{model.url}/v1"
        yield {"BENCH_FAST_MODEL_URL": url, "BENCH_SLOW_MODEL_URL": url}


def phoenix_spans(url: str) -> int | None:
    """Spans Phoenix holds in the benchmark's project (None when it cannot say)."""
    query = "{ projects { edges { node { name recordCount } } } }"
    try:
        answer = httpx.post(f"{url}/graphql", json={"query": query}, timeout=30).json()
        for edge in answer["data"]["projects"]["edges"]:
            if edge["node"]["name"] == PROJECT:
                return int(edge["node"]["recordCount"])
    except (httpx.HTTPError, KeyError, TypeError, ValueError):
        return None
    return 0


def settled_spans(url: str, patience: float = 60.0) -> int | None:
    """Phoenix's span count once it stops growing (it ingests behind the exporters)."""
    last, deadline = phoenix_spans(url), time.monotonic() + patience
    while time.monotonic() < deadline:
        time.sleep(2.0)
        now = phoenix_spans(url)
        if now == last:
            return now
        last = now
    return last


async def warm_up(target: Target) -> None:
    for turn in range(len(target.servers)):
        target.turn = turn
        for workload in WORKLOADS:
            worker = target.worker(workload)
            for _ in range(20):
                target.warm_failures += (await worker()).failed


async def run_round(targets: list[Target], seconds: float, turn: int) -> None:
    for target in targets:
        target.turn = turn
    for workload in WORKLOADS:
        for concurrency in CONCURRENCY:
            order = targets[turn % len(targets) :] + targets[: turn % len(targets)]
            for target in order:
                workers = [target.worker(workload) for _ in range(concurrency)]
                pid = target.server.pid
                before = server_cpu(pid)
                cell = await drive(workers, seconds)
                spent = server_cpu(pid) - before
                target.served[pid] = target.served.get(pid, 0) + len(cell.samples)
                target.cells.setdefault((workload, concurrency), []).append(cell)
                target.cpu.setdefault((workload, concurrency), []).append(spent)


def stop(process: subprocess.Popen[bytes]) -> float:
    """SIGTERM, as a supervisor stops it; seconds until it exited (its exporter flushes)."""
    started = time.monotonic()
    process.terminate()
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    return time.monotonic() - started


# --- report ----------------------------------------------------------------------------------


def cost(base: float, mine: float, higher_is_worse: bool) -> float:
    """Percent of ``base`` this configuration costs (negative: it measured better)."""
    if base <= 0 or base != base or mine != mine:
        return float("nan")
    return 100 * ((mine - base) if higher_is_worse else (base - mine)) / base


def first_delta(cell: Cell, workload: str, q: float) -> float:
    """Time to first delta for a stream; a non-streaming answer's is its whole latency."""
    return cell.ttfd(q) if workload == "stream" else cell.latency(q)


def round_costs(off: Target, target: Target, workload: str, concurrency: int) -> list[float]:
    pairs = zip(
        off.cells[(workload, concurrency)], target.cells[(workload, concurrency)], strict=True
    )
    return [cost(base.rps, mine.rps, False) for base, mine in pairs]


def table(targets: list[Target]) -> list[str]:
    off = targets[0]
    rows = [
        "| workload | c | configuration | req/s | req/s cost | cost per round min / median / "
        "max | TTFD p50 / p99 ms | TTFD p50 cost | server CPU ms/req | CPU cost | failed |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for workload in WORKLOADS:
        for concurrency in CONCURRENCY:
            base = off.merged(workload, concurrency)
            for target in targets:
                cell = target.merged(workload, concurrency)
                rounds = round_costs(off, target, workload, concurrency)
                spread = (
                    f"{min(rounds):+.1f} / {statistics.median(rounds):+.1f} / {max(rounds):+.1f} %"
                    if target is not off
                    else "-"
                )
                p50 = first_delta(cell, workload, 0.5)
                ttfd_cost = cost(first_delta(base, workload, 0.5), p50, True)
                cpu = target.cpu_ms(workload, concurrency)
                cpu_cost = cost(off.cpu_ms(workload, concurrency), cpu, True)
                reference = target is off
                rows.append(
                    f"| {workload} | {concurrency} | {target.config.name} | {cell.rps:,.0f} | "
                    f"{percent(cost(base.rps, cell.rps, False), reference)} | {spread} | "
                    f"{p50:.2f} / {first_delta(cell, workload, 0.99):.2f} | "
                    f"{percent(ttfd_cost, reference)} | {cpu:.2f} | "
                    f"{percent(cpu_cost, reference)} | {cell.failures} |"
                )
    return rows


def percent(value: float, reference: bool) -> str:
    return "-" if reference else f"{value:+.1f} %"


def worst(off: Target, target: Target, measure: str, either_way: bool = False) -> float:
    """The largest cost over the cells: throughput in all four, TTFD p50 in the two streamed;
    ``either_way``: the largest in size, a gain as much as a cost (the control's noise)."""
    costs = []
    for workload in WORKLOADS:
        for concurrency in CONCURRENCY:
            base, cell = off.merged(workload, concurrency), target.merged(workload, concurrency)
            if measure == "req/s":
                costs.append(cost(base.rps, cell.rps, False))
            elif workload == "stream":
                costs.append(cost(base.ttfd(0.5), cell.ttfd(0.5), True))
    return max(costs, key=abs) if either_way else max(costs)


def goals(targets: list[Target]) -> list[tuple[str, str, str, bool]]:
    off, metrics, traced, dead, control = targets
    found = []
    for target, goal in ((metrics, METRICS_GOAL), (traced, TRACING_GOAL), (dead, TRACING_GOAL)):
        for measure in ("req/s", "TTFD p50"):
            worst_cost = worst(off, target, measure)
            found.append(
                (
                    f"{target.config.name}: {measure} cost, worst cell",
                    f"{worst_cost:+.1f} %",
                    f"≤ {goal:g} %",
                    worst_cost <= goal,
                )
            )
    found.append(("dead exporter: failed requests", str(dead.failures()), "0", not dead.failures()))
    for measure in ("req/s", "TTFD p50"):
        noise = worst(off, control, measure, either_way=True)
        found.append(
            (
                f"off (A/A) control: {measure} 'cost', largest either way",
                f"{noise:+.1f} %",
                "(the noise floor)",
                True,
            )
        )
    return found


# --- main ------------------------------------------------------------------------------------


SPAN_COST_SPANS = 20_000


def span_costs(count: int = SPAN_COST_SPANS) -> list[tuple[str, float]]:
    """Microseconds per span of the shape of LGOS's ``chat`` span (three attributes at its start,
    four at its end), made ``count`` times in this process: what the request path pays in the
    SDK, with the batch processor, and what the exporter's thread pays to encode it for OTLP
    (OpenTelemetry's encoder, and :mod:`service_kit.otlp_encoding`'s, which LGOS exports with)."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import (
        BatchSpanProcessor,
        SimpleSpanProcessor,
        SpanExporter,
        SpanExportResult,
    )
    from opentelemetry.trace import SpanKind
    from service_kit.lean_spans import LeanTracer
    from service_kit.otlp_encoding import encode_spans as lean_encode_spans

    class Keep(SpanExporter):
        def __init__(self) -> None:
            self.spans: list[ReadableSpan] = []

        def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
            self.spans += spans
            return SpanExportResult.SUCCESS

    def per_span(provider: TracerProvider, lean: bool = False) -> float:
        tracer = LeanTracer("bench", provider) if lean else provider.get_tracer("bench")
        started = time.perf_counter()
        for _ in range(count):
            with tracer.start_as_current_span(
                "chat model",
                kind=SpanKind.CLIENT,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.provider.name": "openai",
                    "gen_ai.request.model": "model",
                },
            ) as span:
                span.set_attributes(
                    {
                        "gen_ai.response.id": "chatcmpl-1",
                        "gen_ai.usage.input_tokens": 5,
                        "gen_ai.usage.output_tokens": 200,
                        "gen_ai.response.finish_reasons": ("stop",),
                    }
                )
        elapsed = time.perf_counter() - started
        provider.shutdown()
        return elapsed / count * 1e6

    def batched() -> TracerProvider:
        provider = TracerProvider()
        provider.add_span_processor(BatchSpanProcessor(Keep(), max_queue_size=count))
        return provider

    kept = Keep()
    keeping = TracerProvider()
    keeping.add_span_processor(SimpleSpanProcessor(kept))
    costs = [
        ("start, fill and end (the SDK's span, no processor)", per_span(TracerProvider())),
        ("the same, handed to a batch processor", per_span(batched())),
        (
            "start, fill and end (service_kit's lean span, no processor)",
            per_span(TracerProvider(), lean=True),
        ),
        (
            "the same, handed to a batch processor (the request path)",
            per_span(batched(), lean=True),
        ),
    ]
    per_span(keeping)  # only for the spans it keeps: the encoders' input
    started = time.perf_counter()
    encode_spans(kept.spans).SerializeToString()
    costs.append(
        ("OTLP encoding, OpenTelemetry's encoder", (time.perf_counter() - started) / count * 1e6)
    )
    started = time.perf_counter()
    lean_encode_spans(kept.spans)
    costs.append(
        (
            "OTLP encoding, service_kit's (the exporter's thread)",
            (time.perf_counter() - started) / count * 1e6,
        )
    )
    return costs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per cell and round")
    parser.add_argument("--rounds", type=int, default=6, help="interleaved repetitions")
    parser.add_argument(
        "--processes",
        type=int,
        default=3,
        help="servers per configuration, taking the rounds in turn (two processes of one "
        "configuration differ by several percent: more of them average that out)",
    )
    parser.add_argument(
        "--graph",
        choices=sorted(GRAPHS),
        default="bench",
        help="bench: the benchmark graphs' fake model; chat: ChatOpenAI on an offline-model",
    )
    args = parser.parse_args()
    # The configurations set what they need; nothing inherited may switch tracing or metrics.
    for name in list(os.environ):
        if name.startswith("OTEL_") or name in ("PROMETHEUS_MULTIPROC_DIR", "LGOS_METRICS_ENABLED"):
            del os.environ[name]
    cores = sorted(os.sched_getaffinity(0))
    server_core, load_core = cores[0], cores[-1]
    os.sched_setaffinity(0, {load_core})
    install_uvloop()

    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-obs-") as tmp:
        state = Path(tmp)
        phoenix_port, dead_port = free_port(), free_port()  # dead: never bound, refused
        model_env = {}
        if args.graph == "chat":
            model_env = stack.enter_context(offline_model(state, load_core))
        registry = SCALE_REGISTRY if args.graph == "chat" else REGISTRY
        # Each configuration's processes; all of them pinned to the server core, one serving.
        plan = [
            config for config in configs(phoenix_port, dead_port) for _ in range(args.processes)
        ]

        def start(number: int, config: Config) -> subprocess.Popen[bytes]:
            return start_server(
                ports[number],
                {server_core},
                timeout=300,
                registry=registry,
                extra_env={**model_env, **config.env},
                log=state / f"lgos-{number}.log",
            )

        ports = [free_port() for _ in plan]
        # Side by side with Phoenix's start: each takes a while on a loaded machine.
        with ThreadPoolExecutor(len(plan)) as pool:
            futures = [pool.submit(start, n, config) for n, config in enumerate(plan)]
            try:
                phoenix_url = stack.enter_context(phoenix(phoenix_port, state, load_core))
            finally:
                wait(futures)
                for future in futures:
                    if future.exception() is None:
                        server = future.result()
                        stack.callback(server.wait)
                        stack.callback(server.kill)  # a no-op for one stopped below
        failed = [f.exception() for f in futures if f.exception() is not None]
        if failed:
            raise SystemExit(f"an LGOS server did not start: {failed[0]}")
        processes = [f.result() for f in futures]
        servers = [
            Server(port, process.pid) for port, process in zip(ports, processes, strict=True)
        ]
        targets = [
            Target(plan[first], servers[first : first + args.processes], args.graph)
            for first in range(0, len(plan), args.processes)
        ]
        time.sleep(1.0)
        loads = [os.getloadavg()]
        for target in targets:
            asyncio.run(warm_up(target))
        for turn in range(args.rounds):
            asyncio.run(run_round(targets, args.seconds, turn))
            loads.append(os.getloadavg())
        stops: dict[str, float] = {}
        for config, process in zip(plan, processes, strict=True):
            stops[config.name] = max(stops.get(config.name, 0.0), stop(process))
        spans = settled_spans(phoenix_url)

    traced = targets[2]
    one_minute = [load[0] for load in loads]
    graph = (
        "the benchmark graphs (a fake model in the process)"
        if args.graph == "bench"
        else "ChatOpenAI on an offline-model process (the demo's model path)"
    )
    print(
        f"\nObservability overhead, {graph}: {args.processes} `lgos serve` per configuration "
        f"(taking the rounds in turn), all on core {server_core}, "
        f"load generator and Phoenix on core {load_core} ({args.rounds} interleaved rounds x "
        f"{args.seconds:g} s per cell; {os.cpu_count()} cores, "
        f"shared)\nload average (1 min) during the run: min {min(one_minute):.2f}, median "
        f"{statistics.median(one_minute):.2f}, max {max(one_minute):.2f}\n"
        "TTFD for the short (non-streaming) workload is its whole latency. Costs are percent of "
        "'off' (throughput lost, time to first delta added, server CPU per request added).\n"
    )
    print("\n".join(table(targets)))
    rate = "?" if spans is None else f"{spans / max(traced.requests, 1):.1f}"
    print(
        f"\nspans Phoenix holds from 'metrics + tracing': {'?' if spans is None else spans} "
        f"({rate} per request, of the {SPANS_PER_REQUEST} each makes; the exporter drops a batch "
        "Phoenix does not take within its timeout); seconds to stop after SIGTERM: "
        + ", ".join(f"{name} {seconds:.1f}" for name, seconds in stops.items())
    )
    print(
        "requests each process of a configuration served: "
        + "; ".join(
            f"{t.config.name} " + " / ".join(str(t.served.get(s.pid, 0)) for s in t.servers)
            for t in targets
        )
    )
    os.sched_setaffinity(0, {server_core})  # the servers are gone: their core is free
    print(
        f"\nOne span's cost ({SPAN_COST_SPANS:,} spans of the chat span's shape, in one process "
        f"on core {server_core}; a request makes {SPANS_PER_REQUEST})\n"
    )
    print("| part | µs per span |\n|---|---|")
    for part, micros in span_costs():
        print(f"| {part} | {micros:.1f} |")
    print("\n| goal | measured | limit | met |\n|---|---|---|---|")
    for name, measured, limit, ok in goals(targets):
        print(f"| {name} | {measured} | {limit} | {'yes' if ok else 'NO'} |")


if __name__ == "__main__":
    main()
