"""The benchmarks' graphs: trivial, with a fake streaming chat model (no network).

``lgos serve lgos_stack.bench.graphs:create_registry`` serves exactly the graphs the serving
benchmark also runs in-process, so both sides do the same work.

``create_scale_registry`` holds the scale benchmark's graphs: one model call each, on two
offline-model processes. ``slow-chat`` calls the slow model (``BENCH_SLOW_MODEL_URL``, a token
every 200 ms) that holds the thousand streams open; ``fast-chat`` calls an unpaced one
(``BENCH_FAST_MODEL_URL``), so a new request's time to first delta is what LGOS adds while it
holds them, not the model's pacing. ``slow-fake`` / ``fast-fake`` are the same graph around an
in-process FAKE model (``ScriptedFakeChatModel``, same pacing, no HTTP client): what LGOS and
LangGraph cost alone.
"""

from __future__ import annotations

import os
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphFeature, GraphRegistry
from lgos.testing import ScriptedFakeChatModel

REGISTRY = "lgos_stack.bench.graphs:create_registry"
SCALE_REGISTRY = "lgos_stack.bench.graphs:create_scale_registry"
SHORT_TEXT = "A short answer."
STREAM_CHUNKS = 200
USAGE = {"input_tokens": 5, "output_tokens": STREAM_CHUNKS, "total_tokens": STREAM_CHUNKS + 5}


def build(model: BaseChatModel) -> Pregel[Any, Any, Any, Any]:
    """One node: the model's answer to the messages (also the scale benchmark's graph)."""

    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder.compile()


def short_graph() -> Pregel[Any, Any, Any, Any]:
    return build(ScriptedFakeChatModel.saying(SHORT_TEXT, usage=USAGE, yield_between=True))


def stream_graph() -> Pregel[Any, Any, Any, Any]:
    pieces = [f"w{i} " for i in range(STREAM_CHUNKS)]
    return build(ScriptedFakeChatModel(pieces=pieces, usage=USAGE, yield_between=True))


def create_registry() -> GraphRegistry:
    return GraphRegistry.of(
        {
            "bench-short": GraphConfig(graph=short_graph, description="Short answer."),
            "bench-stream": GraphConfig(graph=stream_graph, description="200-chunk answer."),
            "bench-background": GraphConfig(
                graph=short_graph,
                description="Short answer, as a background job (queue benchmark).",
                features=frozenset({GraphFeature.BACKGROUND}),
            ),
        }
    )


FAKE_PIECES = [f"token{i} " for i in range(70)]
FAKE_DELAY = 0.2


def chat_graph(url_variable: str) -> Pregel[Any, Any, Any, Any]:
    # Imported here: the serving benchmark's server must not carry the openai SDK it never uses.
    from lgos_demo_graphs.model import DemoAPISettings, chat_model

    return build(chat_model(DemoAPISettings(offline_model_url=os.environ[url_variable])))


def fake_graph(delay: float) -> Pregel[Any, Any, Any, Any]:
    return build(ScriptedFakeChatModel(pieces=FAKE_PIECES, delay=delay, yield_between=True))


def create_scale_registry() -> GraphRegistry:
    return GraphRegistry.of(
        {
            "slow-chat": GraphConfig(
                graph=lambda: chat_graph("BENCH_SLOW_MODEL_URL"), description="Paced answer."
            ),
            "fast-chat": GraphConfig(
                graph=lambda: chat_graph("BENCH_FAST_MODEL_URL"), description="Unpaced answer."
            ),
            "slow-fake": GraphConfig(
                graph=lambda: fake_graph(FAKE_DELAY), description="Paced FAKE answer."
            ),
            "fast-fake": GraphConfig(graph=lambda: fake_graph(0.0), description="FAKE answer."),
        }
    )
