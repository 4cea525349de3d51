"""advanced-graph per path: latency through LGOS vs. the same graph invoked in-process.

Both sides call the same offline-model, SearXNG and Files service processes, so the ratio is
what serving adds to a real workflow: HTTP and protocol decoding, the checkpointer (LGOS's
embedded SQLite) and the run lease of interrupt-enabled graphs. Paths: chat, research (Web via
SearXNG plus knowledge search) and save → approve (two requests: pause, then resume, upload and
index). Requests run one at a time, alternating between the two sides.

    uv run python -m scripts.bench_advanced --runs 20
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph.types import Command
from lgos_stack.bench.machine import install_uvloop
from lgos_stack.bench.services import services
from lgos_stack.bench.stats import percentile_ms
from lgos_stack.ports import free_port
from lgos_stack.processes import Server, serve

CHAT = "Explain why idempotency matters."
RESEARCH = "Search the web and my knowledge for LangGraph durable execution idempotency."
SAVE = "Remember this exact note: benchmarks print numbers."
PATHS = ("chat", "research", "save → approve")

Run = Callable[[], Awaitable[None]]


@contextmanager
def lgos(state: Path, env: dict[str, str]) -> Iterator[Server]:
    port = free_port()
    with serve(
        ["lgos", "serve", "lgos_demo_graphs.registry:create_registry", "--port", str(port)],
        port=port,
        env={**env, "LGOS_STATE_DIR": str(state / "lgos"), "LGOS_LOG_LEVEL": "warning"},
        log=state / "lgos.log",
    ) as server:
        yield server


def in_process_runs() -> dict[str, Run]:
    from lgos_demo_graphs.advanced.context import AdvancedContext
    from lgos_demo_graphs.advanced.graph import build

    graph = build().copy(update={"checkpointer": InMemorySaver(), "store": InMemoryStore()})
    context = AdvancedContext(server_tools=frozenset({"web_search"}))

    def config() -> Any:
        return {"configurable": {"thread_id": uuid.uuid4().hex}}

    async def invoke(graph_input: Any, thread: Any) -> Any:
        # Exit durability, as LGOS runs interrupt-enabled graphs.
        return await graph.ainvoke(graph_input, thread, context=context, durability="exit")

    async def chat() -> None:
        await invoke({"messages": [HumanMessage(CHAT)]}, config())

    async def research() -> None:
        await invoke({"messages": [HumanMessage(RESEARCH)]}, config())

    async def save() -> None:
        thread = config()
        paused = await invoke({"messages": [HumanMessage(SAVE)]}, thread)
        await invoke(Command(resume={paused["__interrupt__"][0].id: "approve"}), thread)

    return {"chat": chat, "research": research, "save → approve": save}


def served_runs(http: httpx.AsyncClient) -> dict[str, Run]:
    async def create(**body: Any) -> Any:
        response = await http.post("/v1/responses", json={"model": "advanced-graph", **body})
        response.raise_for_status()
        return response.json()

    async def chat() -> None:
        await create(input=CHAT, tools=[{"type": "web_search"}])

    async def research() -> None:
        await create(input=RESEARCH, tools=[{"type": "web_search"}])

    async def save() -> None:
        paused = await create(input=SAVE, tools=[{"type": "web_search"}])
        call = next(i for i in paused["output"] if i.get("name") == "lgos_interrupt")
        answer = {"type": "function_call_output", "call_id": call["call_id"], "output": "approve"}
        await create(previous_response_id=paused["id"], input=[answer])

    return {"chat": chat, "research": research, "save → approve": save}


async def measure(
    local: dict[str, Run], served: dict[str, Run], count: int
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """Alternate the two sides run by run, so warming caches and drift hit both alike."""
    timings: tuple[dict[str, list[float]], dict[str, list[float]]] = ({}, {})
    for path in PATHS:
        for side, runs in zip(timings, (local, served), strict=True):
            await runs[path]()  # warm-up
            side[path] = []
        for _ in range(count):
            for side, runs in zip(timings, (local, served), strict=True):
                started = time.perf_counter()
                await runs[path]()
                side[path].append(time.perf_counter() - started)
    return timings


def table(local: dict[str, list[float]], served: dict[str, list[float]]) -> list[str]:
    rows = [
        "| path | in-process p50 / p99 ms | LGOS p50 / p99 ms | LGOS / in-process p50 |",
        "|---|---|---|---|",
    ]
    for path in PATHS:
        base, mine = local[path], served[path]
        rows.append(
            f"| {path} | {percentile_ms(base, 0.5):.1f} / {percentile_ms(base, 0.99):.1f} | "
            f"{percentile_ms(mine, 0.5):.1f} / {percentile_ms(mine, 0.99):.1f} | "
            f"{percentile_ms(mine, 0.5) / percentile_ms(base, 0.5):.2f} |"
        )
    return rows


async def run_both(env: dict[str, str], state: Path, count: int) -> list[str]:
    os.environ.update(env)  # the in-process graph reads the same DEMO_API_* settings
    with lgos(state, env) as server:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            local, served = await measure(in_process_runs(), served_runs(http), count)
    return table(local, served)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=20, help="timed requests per path and side")
    args = parser.parse_args()
    install_uvloop()
    with tempfile.TemporaryDirectory(prefix="bench-advanced-") as tmp, services(Path(tmp)) as env:
        rows = asyncio.run(run_both(env, Path(tmp), args.runs))
    print(
        f"\nadvanced-graph per path ({args.runs} sequential runs each; offline-model, SearXNG and "
        "the Files service shared by both sides; LGOS with its embedded SQLite checkpointer)\n"
    )
    print("\n".join(rows))


if __name__ == "__main__":
    main()
