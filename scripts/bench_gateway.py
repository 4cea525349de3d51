"""The gateway hop: one LGOS process measured directly and through the real LiteLLM proxy.

A real ``lgos serve`` of the benchmark graphs (``scripts/bench_graphs.py``: a fake streaming chat
model, no network, so both sides do the same graph work) and a real LiteLLM proxy in front of it
under ``lgos-litellm-serve``, configured from ``gateways/litellm/config.yaml`` (our hooks and
settings) plus the catalog sync's entries. The lean keep-alive client of ``bench_serving`` drives
both: non-streaming and 200-chunk streaming Responses, c=1 and c=16. Targets are interleaved
within every round (the machine is shared, so drift hits all of them alike) and rounds repeat.

    make bench-gateway                                    # direct vs gateway, about 2 minutes
    python -m scripts.bench_gateway --compare hooks       # our hooks' share of the hop
    python -m scripts.bench_gateway --compare settings    # LiteLLM settings, each on its own
    python -m scripts.bench_gateway --py-spy /tmp/pyspy/bin/py-spy   # profile the proxy too
    python -m scripts.bench_gateway --graph simple-graph  # the demo's simple-graph instead

``--graph simple-graph`` serves the demo's ``simple-graph`` (ChatOpenAI on a real, unpaced
offline-model process) for both workloads instead: the set-up the reference baseline was taken on.
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import os
import re
import signal
import statistics
import subprocess
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import psutil
import yaml
from lgos import GraphRegistry
from lgos_demo_graphs import simple_graph
from lgos_gateways.catalog import fetch_catalog, lgos_client
from lgos_gateways.litellm_catalog import Upstream, merge_catalog
from lgos_gateways.litellm_sync import BASE_CONFIG
from lgos_stack.bench.graphs import REGISTRY, STREAM_CHUNKS
from lgos_stack.bench.serving import Cell, Connection, drive, start_server
from lgos_stack.paths import LITELLM_BIN, ROOT
from lgos_stack.ports import free_port
from lgos_stack.processes import Server, serve
from lgos_stack.servers import serve_litellm

GATEWAY_KEY = "sk-bench-gateway"
# Counted the same way on both sides: LGOS's data lines and LiteLLM's data-only re-emission
# both carry the event type in the JSON (LiteLLM may put a space after the colon).
DELTA_MARK = b'output_text.delta"'
WORKLOADS = ("short", "stream")
BENCH_MODELS = {"short": "bench-short", "stream": "bench-stream"}
SIMPLE_MODELS = {"short": "simple-graph", "stream": "simple-graph"}
CONCURRENCY = (1, 16)
HOOK_FILES = (
    "lgos_key_auth.py",
    "lgos_callbacks.py",
    "lgos_stream_fidelity.py",
    "lgos_idempotency.py",
    "lgos_trace_context.py",
)
STREAM_FIDELITY = "lgos_stream_fidelity.restore_upstream_usage"
IDEMPOTENCY = "lgos_idempotency.forward_idempotency_key"


# --- gateway variants ------------------------------------------------------------------------


@dataclass(frozen=True)
class Variant:
    """One LiteLLM proxy: the production config edited by ``edit``, with extra environment."""

    name: str
    edit: Callable[[dict[str, Any]], None] = lambda config: None
    env: dict[str, str] = field(default_factory=dict)
    args: tuple[str, ...] = ()
    litellm: Path | None = None


def without_auth_hook(config: dict[str, Any]) -> None:
    # LiteLLM's own master-key check takes over (what runs when the hook is not there).
    config["general_settings"].pop("custom_auth", None)


def only_callbacks(*names: str) -> Callable[[dict[str, Any]], None]:
    """Our callbacks replaced by ``names`` (each hook module keeps a standalone instance)."""

    def edit(config: dict[str, Any]) -> None:
        config["litellm_settings"]["callbacks"] = list(names)

    return edit


def without_hooks(config: dict[str, Any]) -> None:
    without_auth_hook(config)
    config["litellm_settings"].pop("callbacks", None)


def setting(section: str, key: str, value: Any) -> Callable[[dict[str, Any]], None]:
    def edit(config: dict[str, Any]) -> None:
        config.setdefault(section, {})[key] = value

    return edit


GATEWAY = Variant("gateway")
COMPARISONS: dict[str, list[Variant]] = {
    "none": [GATEWAY],
    "hooks": [
        GATEWAY,
        Variant("no auth hook", without_auth_hook),
        Variant("no stream-fidelity hook", only_callbacks(IDEMPOTENCY)),
        Variant("no idempotency hook", only_callbacks(STREAM_FIDELITY)),
        Variant("no LGOS hooks", without_hooks),
    ],
    "settings": [
        GATEWAY,
        Variant("LITELLM_LOG=ERROR", env={"LITELLM_LOG": "ERROR"}),
        Variant("json_logs", setting("litellm_settings", "json_logs", True)),
        Variant("disable_spend_logs", setting("general_settings", "disable_spend_logs", True)),
        Variant(
            "no message logging", setting("litellm_settings", "turn_off_message_logging", True)
        ),
        Variant("NUM_WORKERS=2", env={"NUM_WORKERS": "2"}),
        Variant("--run_granian", args=("--run_granian",)),
    ],
    # The two that moved in a settings run, on their own for a closer look.
    "server": [
        GATEWAY,
        Variant("LITELLM_LOG=ERROR", env={"LITELLM_LOG": "ERROR"}),
        Variant("--run_granian", args=("--run_granian",)),
    ],
}


def hooks_at(ref: str, into: Path) -> Variant:
    """The production gateway with our hooks as committed at git ``ref`` (say, before a change),
    loaded as renamed modules so they run side by side with today's in one interleaved run."""
    tag = "at_" + re.sub(r"\W", "_", ref) + "_"

    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
        return done.stdout

    into.mkdir(parents=True, exist_ok=True)
    for path in git("ls-tree", "--name-only", ref, "gateways/litellm/").split():
        name = Path(path).name
        if name.startswith("lgos_") and name.endswith(".py"):
            source = git("show", f"{ref}:{path}")
            renamed = re.sub(r"\b(from|import) (lgos_\w+)", rf"\1 {tag}\2", source)
            (into / f"{tag}{name}").write_text(renamed)
    then = yaml.safe_load(git("show", f"{ref}:gateways/litellm/config.yaml"))

    def edit(config: dict[str, Any]) -> None:
        config["general_settings"]["custom_auth"] = tag + then["general_settings"]["custom_auth"]
        callbacks = then["litellm_settings"].get("callbacks") or []
        config["litellm_settings"]["callbacks"] = [tag + name for name in callbacks]

    return Variant(f"hooks at {ref}", edit, {"PYTHONPATH": f"{ROOT}{os.pathsep}{into}"})


def gateway_config(base: dict[str, Any], lgos_url: str, variant: Variant) -> dict[str, Any]:
    with lgos_client(lgos_url) as lgos:
        graphs = fetch_catalog(lgos)
    config, _ = merge_catalog(copy.deepcopy(base), graphs, Upstream((f"{lgos_url}/v1",), "unused"))
    # No MCP server runs here and no request below touches one.
    config.pop("mcp_servers", None)
    variant.edit(config)
    result: dict[str, Any] = config
    return result


# --- targets and rounds ------------------------------------------------------------------------


def simple_registry() -> GraphRegistry:
    """The demo's simple-graph alone (``--graph simple-graph``): no other demo service needed."""
    return GraphRegistry.of({"simple-graph": simple_graph.CONFIG})


@dataclass
class Target:
    name: str
    port: int
    model_prefix: str = ""
    models: dict[str, str] = field(default_factory=lambda: dict(BENCH_MODELS))
    headers: str = ""
    pid_file: Path | None = None
    cells: dict[tuple[str, int], list[Cell]] = field(default_factory=dict)
    # CPU seconds the proxy and LGOS spent per cell: unlike latency, barely moved by the other
    # work on a shared machine, so the hooks' share is computed from these.
    cpu: dict[tuple[str, int], list[tuple[float, float]]] = field(default_factory=dict)

    def worker(self, workload: str) -> Callable[[], Any]:
        model = f"{self.model_prefix}{self.models[workload]}"
        body: dict[str, Any] = {"model": model, "input": "hi"}
        if workload == "stream":
            body["stream"] = True
        raw = orjson.dumps(body)
        connection = Connection(self.port, self.headers, DELTA_MARK)
        return lambda: connection.request(raw)

    def merged(self, workload: str, concurrency: int) -> Cell:
        cells = self.cells[(workload, concurrency)]
        return Cell([s for c in cells for s in c.samples], sum(c.elapsed for c in cells))

    def cpu_ms(self, workload: str, concurrency: int) -> tuple[float, float]:
        """(proxy, LGOS) CPU milliseconds per request over every round of one cell."""
        requests = len(self.merged(workload, concurrency).samples)
        spent = self.cpu[(workload, concurrency)]
        return (
            1000 * sum(proxy for proxy, _ in spent) / requests,
            1000 * sum(lgos for _, lgos in spent) / requests,
        )

    def proxy_pid(self) -> int | None:
        if self.pid_file is None:
            return None
        return int(self.pid_file.with_name(self.pid_file.name + ".child").read_text())


async def warm_up(target: Target, chunks: int | None) -> int:
    """Warm ``target`` up; returns the stream's deltas (``chunks`` when that is known)."""
    deltas = 0
    for workload in WORKLOADS:
        worker = target.worker(workload)
        samples = [await worker() for _ in range(10)]
        if workload == "stream":
            deltas = samples[-1].deltas
            if deltas != (chunks or deltas) or deltas < 2:
                raise SystemExit(f"{target.name}: {deltas} deltas, not {chunks or 'several'}")
    return deltas


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU of a process and its children (LiteLLM's workers, if any)."""
    if pid is None:
        return 0.0
    process = psutil.Process(pid)
    total = 0.0
    for each in [process, *process.children(recursive=True)]:
        times = each.cpu_times()
        total += times.user + times.system
    return total


async def run_round(
    targets: list[Target],
    seconds: float,
    turn: int,
    profile: Callable[[str], Any],
    lgos_pid: int,
) -> None:
    for workload in WORKLOADS:
        for concurrency in CONCURRENCY:
            # Rotated each round, so no target always runs first (or right after another).
            order = targets[turn % len(targets) :] + targets[: turn % len(targets)]
            for target in order:
                workers = [target.worker(workload) for _ in range(concurrency)]
                with profile(f"{target.name}|{workload}|{concurrency}"):
                    proxy, lgos = cpu_seconds(target.proxy_pid()), cpu_seconds(lgos_pid)
                    cell = await drive(workers, seconds)
                    spent = (cpu_seconds(target.proxy_pid()) - proxy, cpu_seconds(lgos_pid) - lgos)
                target.cells.setdefault((workload, concurrency), []).append(cell)
                target.cpu.setdefault((workload, concurrency), []).append(spent)


# --- py-spy --------------------------------------------------------------------------------


@dataclass
class Profiler:
    """``py-spy record`` (raw collapsed stacks) of the proxy during the gateway's c=16 cells."""

    py_spy: Path | None
    target: Target | None
    out_dir: Path
    files: list[Path] = field(default_factory=list)

    @contextmanager
    def __call__(self, cell: str) -> Iterator[None]:
        name, _, concurrency = cell.split("|")
        pid = self.target.proxy_pid() if self.target else None
        if self.py_spy is None or pid is None or self.target is None:
            yield
            return
        if name != self.target.name or concurrency != "16":
            yield
            return
        out = self.out_dir / f"py-spy-{len(self.files)}.txt"
        command = [str(self.py_spy), "record", "--pid", str(pid), "--subprocesses"]
        spy = subprocess.Popen(
            [*command, "--rate", "250", "--format", "raw", "--nonblocking", "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        time.sleep(0.5)  # attached before the load starts
        try:
            yield
        finally:
            spy.send_signal(signal.SIGINT)
            spy.wait(timeout=30)
            self.files.append(out)

    def report(self) -> list[str]:
        return attribute(self.files)


def attribute(files: list[Path]) -> list[str]:
    """Samples whose stack runs our hook code, by hook module, and the top modules overall.

    A sample counts for a hook when a hook frame is on the stack, except when the hook is only
    awaiting the stream it wraps (``async for`` over LiteLLM's iterator): that time is LiteLLM's
    own streaming, which runs the same without the hook."""
    total = 0
    ours: Counter[str] = Counter()
    leaf: Counter[str] = Counter()
    for path in files:
        if not path.exists():
            continue
        for line in path.read_text().splitlines():
            stack, _, count = line.rpartition(" ")
            if not count.isdigit():
                continue
            n = int(count)
            total += n
            frames = stack.split(";")
            leaf[module_of(frames[-1])] += n
            hooked = [i for i, f in enumerate(frames) if any(h in f for h in HOOK_FILES)]
            if not hooked:
                continue
            deepest = hooked[-1]
            below = frames[deepest + 1] if deepest + 1 < len(frames) else ""
            if "__anext__" in below or "asend" in below:
                continue
            ours[next(h for h in HOOK_FILES if h in frames[deepest])] += n
    if not total:
        return ["py-spy recorded no samples (is ptrace allowed here?)"]
    rows = [
        f"py-spy: {total} samples of the proxy during the gateway's c=16 cells "
        f"(raw stacks in {files[0].parent})",
        "",
        "| our hook code on the stack | samples | share |",
        "|---|---|---|",
    ]
    for hook in HOOK_FILES:
        rows.append(f"| {hook} | {ours[hook]} | {100 * ours[hook] / total:.2f} % |")
    in_hooks = sum(ours.values())
    rows.append(f"| all LGOS hooks | {in_hooks} | {100 * in_hooks / total:.2f} % |")
    rows += ["", "| top leaf modules (self) | samples | share |", "|---|---|---|"]
    for module, n in leaf.most_common(12):
        rows.append(f"| {module} | {n} | {100 * n / total:.1f} % |")
    return rows


def module_of(frame: str) -> str:
    """``func (path/to/pkg/mod.py:12)`` -> ``pkg/mod.py`` (site-packages-relative)."""
    location = frame.rpartition("(")[2].rstrip(")").rpartition(":")[0]
    if "site-packages/" in location:
        location = location.split("site-packages/", 1)[1]
    parts = location.split("/")
    return "/".join(parts[:2]) if len(parts) > 1 else location or frame


# --- report --------------------------------------------------------------------------------


def hop_table(direct: Target, gateways: list[Target]) -> list[str]:
    rows = [
        "| workload | c | target | req/s | p50 / p99 ms | added p50 ms | "
        "proxy CPU ms/req | LGOS CPU ms/req |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for workload in WORKLOADS:
        for concurrency in CONCURRENCY:
            base = direct.merged(workload, concurrency)
            rows.append(
                f"| {workload} | {concurrency} | direct | {base.rps:,.0f} | "
                f"{base.latency(0.5):.1f} / {base.latency(0.99):.1f} | - | - | "
                f"{direct.cpu_ms(workload, concurrency)[1]:.2f} |"
            )
            for target in gateways:
                cell = target.merged(workload, concurrency)
                proxy, lgos = target.cpu_ms(workload, concurrency)
                rows.append(
                    f"| {workload} | {concurrency} | {target.name} | {cell.rps:,.0f} | "
                    f"{cell.latency(0.5):.1f} / {cell.latency(0.99):.1f} | "
                    f"{cell.latency(0.5) - base.latency(0.5):.1f} | {proxy:.2f} | {lgos:.2f} |"
                )
    return rows


def share_table(gateways: list[Target]) -> list[str]:
    """Each variant's proxy CPU per request against the production gateway's: what the change
    saves (positive) or costs. For "no LGOS hooks" that is our hooks' share of the hop."""
    production = gateways[0]
    cells = [(w, c) for w in WORKLOADS for c in CONCURRENCY]
    head = " | ".join(f"{w} c={c}" for w, c in cells)
    rows = [
        f"| variant: proxy CPU ms/req (saved vs {production.name}) | {head} |",
        "|---|" + "---|" * len(cells),
    ]
    for target in gateways:
        values = []
        for workload, concurrency in cells:
            mine = target.cpu_ms(workload, concurrency)[0]
            reference = production.cpu_ms(workload, concurrency)[0]
            saved = 100 * (reference - mine) / reference if reference > 0 else 0.0
            values.append(f"{mine:.2f} ({saved:+.1f} %)")
        rows.append(f"| {target.name} | {' | '.join(values)} |")
    return rows


# --- main ------------------------------------------------------------------------------------


def start_gateways(
    stack: ExitStack,
    variants: list[Variant],
    base: dict[str, Any],
    lgos_url: str,
    state: Path,
    litellm: Path,
    models: dict[str, str],
) -> list[Target]:
    """One proxy per variant, started side by side (each takes 15-60 s here); all stop with
    ``stack``, also when one of them fails to start."""

    def start(number: int, variant: Variant) -> tuple[AbstractContextManager[Server], Server]:
        config = state / f"litellm-{number}.yaml"
        config.write_text(yaml.safe_dump(gateway_config(base, lgos_url, variant)))
        env = {
            "OPENAI_GATEWAY_API_KEY": GATEWAY_KEY,
            "FILES_API_BASE": "http://127.0.0.1:9/v1",  # the Files entry is never called
            "FILES_API_KEY": "unused",
            "LGOS_LOG_LEVEL": "warning",
            **variant.env,
        }
        manager = serve_litellm(
            config,
            state,
            env,
            f"litellm-{number}",
            litellm=variant.litellm or litellm,
            timeout=300,
            litellm_args=variant.args,
        )
        return manager, manager.__enter__()

    with ThreadPoolExecutor(len(variants)) as pool:
        futures = [pool.submit(start, n, v) for n, v in enumerate(variants)]
        wait(futures)
    failures = [f.exception() for f in futures if f.exception() is not None]
    for future in futures:
        if future.exception() is None:
            stack.push(future.result()[0].__exit__)
    if failures:
        raise SystemExit(f"a LiteLLM proxy did not start: {failures[0]}")
    return [
        Target(
            variant.name,
            int(future.result()[1].url.rsplit(":", 1)[1]),
            model_prefix="lgos/",
            headers=f"Authorization: Bearer {GATEWAY_KEY}\r\n",
            pid_file=state / f"litellm-{number}.pid",
            models=dict(models),
        )
        for number, (variant, future) in enumerate(zip(variants, futures, strict=True))
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=3.0, help="per cell and round")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved repetitions")
    parser.add_argument(
        "--compare",
        choices=sorted(COMPARISONS),
        default="none",
        help="also run variants of the gateway: without each LGOS hook, or with LiteLLM settings",
    )
    parser.add_argument("--hooks-share", action="store_true", help="same as --compare hooks")
    parser.add_argument("--py-spy", type=Path, help="a py-spy binary: profile the proxy at c=16")
    parser.add_argument(
        "--litellm", type=Path, default=Path(os.environ.get("LITELLM_BIN", LITELLM_BIN))
    )
    parser.add_argument(
        "--alt-litellm",
        type=Path,
        help="also the production config on another LiteLLM install (e.g. one with httptools)",
    )
    parser.add_argument(
        "--hooks-from",
        metavar="GIT_REF",
        help="also the production gateway with the hooks (and their config) of this commit",
    )
    parser.add_argument(
        "--alt-pythonpath",
        type=Path,
        help="also the production gateway with this directory on its PYTHONPATH (extra packages)",
    )
    parser.add_argument(
        "--graph",
        choices=("bench", "simple-graph"),
        default="bench",
        help="bench: fake-model benchmark graphs (200-chunk stream); simple-graph: the demo's, "
        "on an unpaced offline-model",
    )
    args = parser.parse_args()
    variants = COMPARISONS["hooks" if args.hooks_share else args.compare]
    if args.alt_pythonpath:
        path = f"{ROOT}{os.pathsep}{args.alt_pythonpath}"
        variants = [*variants, Variant(f"+ {args.alt_pythonpath}", env={"PYTHONPATH": path})]
    if args.hooks_from:
        hooks_dir = Path(tempfile.mkdtemp(prefix="bench-gateway-hooks-"))
        variants = [*variants, hooks_at(args.hooks_from, hooks_dir)]
    if args.alt_litellm:
        variants = [*variants, Variant(f"alt: {args.alt_litellm}", litellm=args.alt_litellm)]
    base = yaml.safe_load(BASE_CONFIG.read_text())

    with ExitStack() as stack, tempfile.TemporaryDirectory(prefix="bench-gateway-") as tmp:
        state = Path(tmp)
        lgos_port = free_port()
        models, registry, lgos_env = BENCH_MODELS, REGISTRY, {}
        chunks: int | None = STREAM_CHUNKS
        if args.graph == "simple-graph":
            model_port = free_port()
            offline = stack.enter_context(
                serve(
                    ["offline_model", "--port", str(model_port)],
                    port=model_port,
                    env={"OFFLINE_MODEL_TOKEN_DELAY": "0"},
                    log=state / "offline-model.log",
                )
            )
            models, registry = SIMPLE_MODELS, "scripts.bench_gateway:simple_registry"
            chunks = None
            lgos_env = {"DEMO_API_OFFLINE_MODEL_URL": f"{offline.url}/v1"}
        lgos = start_server(
            lgos_port,
            set(os.sched_getaffinity(0)),
            timeout=180,
            registry=registry,
            extra_env=lgos_env,
        )
        stack.callback(lgos.wait)
        stack.callback(lgos.terminate)
        lgos_url = f"http://127.0.0.1:{lgos_port}"
        direct = Target("direct", lgos_port, models=dict(models))
        gateways = start_gateways(stack, variants, base, lgos_url, state, args.litellm, models)
        targets = [direct, *gateways]
        # Kept after the run, for a closer look (e.g. speedscope, or grep).
        profiler = Profiler(args.py_spy, gateways[0], Path(tempfile.mkdtemp(prefix="py-spy-")))
        loads: list[tuple[float, float, float]] = [os.getloadavg()]
        for target in targets:
            deltas = asyncio.run(warm_up(target, chunks))
        for turn in range(args.rounds):
            asyncio.run(run_round(targets, args.seconds, turn, profiler, lgos.pid))
            loads.append(os.getloadavg())
        profile = profiler.report() if args.py_spy and profiler.files else []

    one_minute = [load[0] for load in loads]
    graph_name = (
        "the demo's simple-graph on offline-model"
        if args.graph == "simple-graph"
        else "fake-model benchmark graphs"
    )
    print(
        f"\nThe gateway hop: LGOS direct vs through LiteLLM ({args.rounds} interleaved rounds x "
        f"{args.seconds:g} s per cell; {graph_name}, {deltas}-chunk stream; "
        f"{os.cpu_count()} cores, "
        f"shared)\nload average (1 min) during the run: min {min(one_minute):.2f}, "
        f"median {statistics.median(one_minute):.2f}, max {max(one_minute):.2f}\n"
    )
    print("\n".join(hop_table(direct, gateways)))
    if len(gateways) > 1:
        print(f"\nVariants against the production gateway ({variants[0].name}):\n")
        print("\n".join(share_table(gateways)))
    if profile:
        print("\n" + "\n".join(profile))


if __name__ == "__main__":
    main()
