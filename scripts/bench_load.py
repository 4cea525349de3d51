"""Load: concurrent streaming Responses through LGOS and through the LiteLLM gateway, and a soak.

Real processes over sockets: offline-model (``--token-delay`` between tokens), SearXNG, the
Files service, a fresh PostgreSQL database on the machine's server, a private ``redis-server``
on a free port, one ``lgos serve`` (demo registry; PostgreSQL checkpoints and Store, Redis
leases, the distributed background engine) with one ``lgos worker``, and the LiteLLM proxy
(``.tools/litellm``) synced from that LGOS, with this project's hooks (auth, stream fidelity,
idempotency).

Phases, each one burst of concurrent streams started at once:

- ``trivial``: ``--trivial`` (200) streams on ``simple-graph``, each with its own input;
- ``advanced``: ``--advanced`` (50) on ``advanced-graph``, round-robin over its chat, research
  (Web + knowledge search) and save → approve (pause, then resume: upload and index) paths;
- ``gateway``: ``--gateway`` (50) on ``lgos/simple-graph`` through the LiteLLM proxy;
- ``soak``: ``--soak`` seconds (default 30; ``--soak 300`` for the long run) of mixed traffic
  from ``--soak-clients`` (12) clients: chat, server tools (web search), interrupts (pause →
  approve) and background Responses (created, polled to completion).

Every answer must equal the offline-model's deterministic answer (the streamed deltas and the
final response object both); each phase reports LGOS's RSS cold (before its first round),
before the measured round (after ``--warm`` unmeasured rounds of the same burst: pools and
caches grow to a concurrency once), at peak and after (``--settle`` seconds later; it must be
within 10 % of before), RSS per open stream at the peak, and time to first delta.

    make bench-load    # or: uv run python -m scripts.bench_load --soak 300
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import yaml
from lgos_stack.bench.load_client import (
    OpenStreams,
    RSSMeter,
    StreamResult,
    output_text,
    stream_response,
)
from lgos_stack.bench.machine import install_uvloop, load_average, raise_fd_limit
from lgos_stack.bench.report import Check, print_checks
from lgos_stack.bench.services import database, services
from lgos_stack.bench.stats import percentile_ms
from lgos_stack.paths import LITELLM_BIN, ROOT
from lgos_stack.ports import free_port
from lgos_stack.processes import Server, serve
from lgos_stack.servers import serve_lgos, serve_redis

TARGET = "lgos_demo_graphs.registry:create_registry"
GATEWAY_KEY = "sk-bench-load-gateway"
RESEARCH = "Search the web and my knowledge for LangGraph durable execution idempotency."
SAVE = "Remember this exact note: load benchmarks print numbers."
SEARCH = "web search persistence checkpointers"
NO_LEAK = 1.10
# A saved note's file name and id are new per save; the rest of its answer is deterministic.
SAVED_NAMES = re.compile(r"-[0-9a-f]{8}\.md|file-[A-Za-z0-9]+")


def comparable(text: str) -> str:
    return SAVED_NAMES.sub("<saved>", text)


# --- the stack ---------------------------------------------------------------------------------


def gateway_config(state: Path, lgos: Server) -> Path:
    """The project's LiteLLM config minus its Files and MCP entries, synced from ``lgos``."""
    base = yaml.safe_load((ROOT / "gateways" / "litellm" / "config.yaml").read_text())
    base["model_list"] = []
    base.pop("files_settings", None)
    base.pop("mcp_servers", None)
    base_file, config = state / "litellm-base.yaml", state / "litellm.yaml"
    base_file.write_text(yaml.safe_dump(base))
    subprocess.run(
        [
            sys.executable,
            "-m",
            "lgos_gateways.litellm_sync",
            "--lgos-url",
            lgos.url,
            "--config",
            str(config),
            "--base",
            str(base_file),
        ],
        env={**os.environ, "PYTHONPATH": str(ROOT), "OPENAI_GATEWAY_API_KEY": GATEWAY_KEY},
        check=True,
        capture_output=True,
        cwd=ROOT,
        timeout=120,
    )
    return config


@dataclass
class Stack:
    lgos: Server
    gateway: Server | None

    @property
    def port(self) -> int:
        return int(self.lgos.url.rsplit(":", 1)[1])


@contextmanager
def stack(state: Path, token_delay: float, with_gateway: bool) -> Iterator[Stack]:
    os.environ["OFFLINE_MODEL_TOKEN_DELAY"] = str(token_delay)  # read by the model process
    with ExitStack() as stack:
        demo_env = stack.enter_context(services(state))
        env = {
            **demo_env,
            "LGOS_POSTGRES_URI": stack.enter_context(database()),
            "LGOS_REDIS_URL": stack.enter_context(serve_redis(state)),
            "LGOS_BACKGROUND": "distributed",
            "LGOS_BACKGROUND_QUEUE": f"lgos-bench-load:{uuid.uuid4().hex[:8]}",
            "LGOS_STATE_DIR": str(state / "lgos"),
            "LGOS_LOG_LEVEL": "warning",
            "DEMO_API_REPORT_STEP_SECONDS": "0.1",
        }
        # Start-up takes long on a busy shared machine: a generous health deadline.
        lgos = stack.enter_context(
            serve_lgos("serve", TARGET, env=env, log=state / "lgos.log", timeout=90)
        )
        stack.enter_context(
            serve_lgos("worker", TARGET, env=env, log=state / "worker.log", timeout=90)
        )
        gateway = None
        if with_gateway:
            gateway_port = free_port()
            gateway = stack.enter_context(
                serve(
                    [
                        "lgos_gateways.litellm_serve",
                        "--config",
                        str(gateway_config(state, lgos)),
                        "--port",
                        str(gateway_port),
                        "--litellm",
                        str(LITELLM_BIN),
                    ],
                    port=gateway_port,
                    env={"OPENAI_GATEWAY_API_KEY": GATEWAY_KEY, "LGOS_LOG_LEVEL": "warning"},
                    log=state / "litellm.log",
                    timeout=120,
                    health_path="/health/liveliness",
                )
            )
        yield Stack(lgos, gateway)


# --- one journey each: a streamed result, checked against its expected text -------------------


@dataclass
class Outcome:
    kind: str
    result: StreamResult
    expected: str | None
    problem: str | None = None

    @property
    def ok(self) -> bool:
        if self.problem is not None or not self.result.ok:
            return False
        final = output_text(self.result.response) if self.result.response else ""
        if self.result.text != final:
            return False
        return self.expected is None or comparable(final) == comparable(self.expected)


Journey = Callable[[OpenStreams | None], Awaitable[Outcome]]


def interrupt_call(result: StreamResult) -> dict[str, Any] | None:
    for item in (result.response or {}).get("output", []):
        if item.get("type") == "function_call" and item.get("name") == "lgos_interrupt":
            return dict(item)
    return None


class Journeys:
    """The requests of each kind, and their expected answers (taken once, sequentially)."""

    def __init__(self, stack: Stack) -> None:
        self.port = stack.port
        self.gateway = stack.gateway
        self.expected: dict[str, str] = {}

    async def stream(
        self, body: dict[str, Any], open_streams: OpenStreams | None, *, via_gateway: bool = False
    ) -> StreamResult:
        if via_gateway:
            assert self.gateway is not None
            port = int(self.gateway.url.rsplit(":", 1)[1])
            headers = {"Authorization": f"Bearer {GATEWAY_KEY}"}
            body = {**body, "model": f"lgos/{body['model']}"}
            return await stream_response(port, body, headers=headers, open_streams=open_streams)
        return await stream_response(self.port, body, open_streams=open_streams)

    def chat(self, i: int, *, via_gateway: bool = False) -> Journey:
        text = f"load {i}: hello there"

        async def run(open_streams: OpenStreams | None) -> Outcome:
            result = await self.stream(
                {"model": "simple-graph", "input": text}, open_streams, via_gateway=via_gateway
            )
            template = self.expected.get("chat")
            expected = template.replace("load reference", f"load {i}") if template else None
            return Outcome("gateway chat" if via_gateway else "chat", result, expected)

        return run

    def advanced(self, path: str) -> Journey:
        async def run(open_streams: OpenStreams | None) -> Outcome:
            base = {"model": "advanced-graph", "tools": [{"type": "web_search"}]}
            if path != "save → approve":
                text = RESEARCH if path == "research" else "Explain why idempotency matters."
                result = await self.stream({**base, "input": text}, open_streams)
                return Outcome(path, result, self.expected.get(f"advanced {path}"))
            paused = await self.stream({**base, "input": SAVE}, open_streams)
            call = interrupt_call(paused)
            if call is None:
                return Outcome(path, paused, None, f"no interrupt: {paused.error}")
            answer = {
                "type": "function_call_output",
                "call_id": call["call_id"],
                "output": "approve",
            }
            body = {**base, "previous_response_id": paused.response["id"], "input": [answer]}  # type: ignore[index]
            result = await self.stream(body, open_streams)
            result.ttfd = paused.ttfd if paused.ttfd is not None else result.ttfd
            return Outcome(path, result, self.expected.get(f"advanced {path}"))

        return run

    def tools(self) -> Journey:
        async def run(open_streams: OpenStreams | None) -> Outcome:
            body = {"model": "server-tools", "input": SEARCH, "tools": [{"type": "web_search"}]}
            result = await self.stream(body, open_streams)
            return Outcome("tools", result, self.expected.get("tools"))

        return run

    def approval(self) -> Journey:
        async def run(open_streams: OpenStreams | None) -> Outcome:
            body = {"model": "interruptible-approval", "input": "Ship the load report"}
            paused = await self.stream(body, open_streams)
            call = interrupt_call(paused)
            if call is None:
                return Outcome("interrupt", paused, None, f"no interrupt: {paused.error}")
            answer = {
                "type": "function_call_output",
                "call_id": call["call_id"],
                "output": "approve",
            }
            resume = {
                "model": "interruptible-approval",
                "previous_response_id": paused.response["id"],  # type: ignore[index]
                "input": [answer],
            }
            result = await self.stream(resume, open_streams)
            result.ttfd = paused.ttfd if paused.ttfd is not None else result.ttfd
            return Outcome("interrupt", result, self.expected.get("interrupt"))

        return run

    def background(self) -> Journey:
        """Created in the background, polled until it ends (not a stream: no TTFD)."""

        async def run(open_streams: OpenStreams | None) -> Outcome:
            result = StreamResult()
            started = time.perf_counter()
            body = {"model": "background-report", "input": "Report on load", "background": True}
            try:
                async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{self.port}") as http:
                    created = (await http.post("/v1/responses", json=body, timeout=30)).json()
                    while True:
                        got = await http.get(f"/v1/responses/{created['id']}", timeout=30)
                        response = got.json()
                        if response.get("status") not in ("queued", "in_progress"):
                            break
                        await asyncio.sleep(0.1)
                result.response, result.status = response, response.get("status")
                result.text = output_text(response)
            except (httpx.HTTPError, KeyError, ValueError) as exc:
                result.error = f"{type(exc).__name__}: {exc}"
            result.elapsed = time.perf_counter() - started
            return Outcome("background", result, self.expected.get("background"))

        return run

    async def take_references(self, with_gateway: bool) -> None:
        """Each kind once, one at a time: its answer is the expected text under load."""
        self.expected["chat"] = await self._reference(self.chat_reference())
        for path in ("chat", "research", "save → approve"):
            self.expected[f"advanced {path}"] = await self._reference(self.advanced(path))
        self.expected["tools"] = await self._reference(self.tools())
        self.expected["interrupt"] = await self._reference(self.approval())
        self.expected["background"] = await self._reference(self.background())
        if with_gateway:
            await self._reference(self.chat(-1, via_gateway=True))

    def chat_reference(self) -> Journey:
        async def run(open_streams: OpenStreams | None) -> Outcome:
            body = {"model": "simple-graph", "input": "load reference: hello there"}
            return Outcome("chat", await self.stream(body, open_streams), None)

        return run

    async def _reference(self, journey: Journey) -> str:
        outcome = await journey(None)
        if not outcome.ok or outcome.result.response is None:
            result = outcome.result
            raise SystemExit(
                f"reference {outcome.kind} failed: {outcome.problem or result.error}; status "
                f"{result.status}, streamed {result.text!r}"
            )
        return output_text(outcome.result.response)


# --- phases ------------------------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    outcomes: list[Outcome] = field(default_factory=list)
    rss_cold: float = 0.0
    """Before the warm-up round(s), if any."""
    rss_before: float = 0.0
    rss_peak: float = 0.0
    rss_after: float = 0.0
    most_open: int = 0
    elapsed: float = 0.0

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def per_stream_kb(self) -> float:
        """Growth over the cold RSS (the first round's peak stays held after it) per open stream."""
        peak = max(self.rss_peak, self.rss_before)
        return (peak - self.rss_cold) * 1024 / max(1, self.most_open)

    def ttfd(self, q: float) -> float:
        return percentile_ms([o.result.ttfd for o in self.outcomes if o.result.ttfd is not None], q)


async def measured(
    phase: Phase, meter: RSSMeter, open_streams: OpenStreams, started: float, settle: float
) -> Phase:
    """Close a phase's measurement: wall time, peak, most open; RSS ``settle`` s later."""
    phase.elapsed = time.perf_counter() - started
    await meter.stop()
    phase.rss_peak, phase.most_open = meter.peak, open_streams.most
    await asyncio.sleep(settle)
    phase.rss_after = meter.now()
    return phase


async def burst(name: str, pid: int, journeys: list[Journey], settle: float, warm: int) -> Phase:
    """``warm`` unmeasured rounds first (pools and caches grow to this concurrency once, which
    is no leak); then RSS before, the measured round, RSS after. Every round's answers count."""
    phase = Phase(name)
    open_streams = OpenStreams()
    meter = RSSMeter(pid, open_streams)
    phase.rss_cold = meter.now()
    for _ in range(warm):
        phase.outcomes += await asyncio.gather(*(j(None) for j in journeys))
        await asyncio.sleep(settle)
    phase.rss_before = meter.now()
    meter.start()
    started = time.perf_counter()
    phase.outcomes += await asyncio.gather(*(j(open_streams) for j in journeys))
    return await measured(phase, meter, open_streams, started, settle)


async def soak(
    name: str, pid: int, make: Callable[[int], Journey], seconds: float, clients: int, settle: float
) -> Phase:
    phase = Phase(name)
    open_streams = OpenStreams()
    meter = RSSMeter(pid, open_streams, every=0.2)
    phase.rss_before = phase.rss_cold = meter.now()
    meter.start()
    started = time.perf_counter()
    counter = iter(range(10**9))

    async def client() -> None:
        while time.perf_counter() - started < seconds:
            phase.outcomes.append(await make(next(counter))(open_streams))

    await asyncio.gather(*(client() for _ in range(clients)))
    return await measured(phase, meter, open_streams, started, settle)


async def run(stack: Stack, args: argparse.Namespace) -> list[Phase]:
    journeys = Journeys(stack)
    with_gateway = stack.gateway is not None
    await journeys.take_references(with_gateway)
    for _ in range(2):  # warm-up: every kind once more, a few at a time
        await asyncio.gather(*(journeys.chat(i)(None) for i in range(8)))
        await journeys.advanced("save → approve")(None)
        await journeys.approval()(None)
    await asyncio.sleep(args.settle)
    pid = stack.lgos.process.pid
    paths = ("chat", "research", "save → approve")
    phases = []
    if args.trivial > 0:
        trivial = [journeys.chat(i) for i in range(args.trivial)]
        phases.append(await burst("trivial", pid, trivial, args.settle, args.warm))
    if args.advanced > 0:
        advanced = [journeys.advanced(paths[i % 3]) for i in range(args.advanced)]
        phases.append(await burst("advanced", pid, advanced, args.settle, args.warm))
    if with_gateway:
        gateway_journeys = [journeys.chat(i, via_gateway=True) for i in range(args.gateway)]
        phases.append(await burst("gateway", pid, gateway_journeys, args.settle, args.warm))
    kinds: list[Callable[[], Journey]] = [
        lambda: journeys.tools(),
        lambda: journeys.approval(),
        lambda: journeys.background(),
    ]

    def mixed(i: int) -> Journey:
        return journeys.chat(i) if i % 2 == 0 else kinds[(i // 2) % len(kinds)]()

    if args.soak > 0:
        phases.append(await soak("soak", pid, mixed, args.soak, args.soak_clients, args.settle))
    return phases


def report(phases: list[Phase], args: argparse.Namespace, loop_name: str, load: list[str]) -> bool:
    print(
        f"\nLoad through LGOS (one `lgos serve`, PostgreSQL + private Redis, one worker) and the "
        f"LiteLLM gateway; offline-model token delay {args.token_delay * 1000:.0f} ms; load "
        f"generator on {loop_name}; load average (1/5/15 min) before / after: {load[0]} / "
        f"{load[1]}\n"
    )
    print(
        "| phase | requests | completed with parity | errors "
        "| RSS cold / before / peak / after MiB | most open streams "
        "| RSS per open stream (peak - cold) | TTFD p50 / p99 ms | wall s |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    checks = []
    for p in phases:
        kinds = sorted({o.kind for o in p.outcomes})
        good = len(p.outcomes) - len(p.failures)
        print(
            f"| {p.name} ({', '.join(kinds)}) | {len(p.outcomes)} | {good} | {len(p.failures)} "
            f"| {p.rss_cold:.0f} / {p.rss_before:.0f} / {p.rss_peak:.0f} / {p.rss_after:.0f} "
            f"| {p.most_open} "
            f"| {p.per_stream_kb:.0f} KB | {p.ttfd(0.5):.0f} / {p.ttfd(0.99):.0f} "
            f"| {p.elapsed:.1f} |"
        )
        checks.append(
            Check(
                f"{p.name}: all complete, text parity, no errors",
                f"{good} / {len(p.outcomes)}",
                "all",
                not p.failures and bool(p.outcomes),
            )
        )
        ratio = p.rss_after / p.rss_before
        checks.append(
            Check(
                f"{p.name}: RSS after / before (no leak)",
                f"{ratio:.2f}",
                f"≤ {NO_LEAK:.2f}",
                ratio <= NO_LEAK,
            )
        )
    for p in phases:
        for o in p.failures[:3]:
            reason = (
                o.problem
                or o.result.error
                or (
                    f"status {o.result.status}, text {o.result.text[:80]!r} "
                    f"expected {(o.expected or '')[:80]!r}"
                )
            )
            print(f"\n{p.name} failure ({o.kind}): {reason}")
    if args.gateway > 0 and not any(p.name == "gateway" for p in phases):
        print("\ngateway phase skipped: LiteLLM is not installed in .tools/litellm")
    return print_checks(checks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trivial", type=int, default=200, help="streams on simple-graph")
    parser.add_argument("--advanced", type=int, default=50, help="streams on advanced-graph")
    parser.add_argument("--gateway", type=int, default=50, help="streams through LiteLLM")
    parser.add_argument("--soak", type=float, default=30.0, help="seconds of mixed traffic")
    parser.add_argument("--soak-clients", type=int, default=12, help="concurrent soak clients")
    parser.add_argument("--token-delay", type=float, default=0.02, help="offline-model pacing")
    parser.add_argument("--settle", type=float, default=3.0, help="seconds before 'after' RSS")
    parser.add_argument(
        "--warm", type=int, default=1, help="unmeasured rounds of each burst before 'before' RSS"
    )
    args = parser.parse_args()
    loop_name = install_uvloop()
    raise_fd_limit(8 * max(args.trivial, args.advanced, args.gateway) + 256)
    with_gateway = args.gateway > 0 and LITELLM_BIN.exists()
    load = [load_average()]
    with (
        tempfile.TemporaryDirectory(prefix="bench-load-") as tmp,
        stack(Path(tmp), args.token_delay, with_gateway) as running,
    ):
        phases = asyncio.run(run(running, args))
    load.append(load_average())
    report(phases, args, loop_name, load)


if __name__ == "__main__":
    main()
