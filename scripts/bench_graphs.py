"""The benchmark's graphs: trivial, with a fake streaming chat model (no network).

``lgos serve scripts.bench_graphs:create_registry`` serves exactly the graphs the benchmark also
runs in-process, so both sides do the same work.
"""

from __future__ import annotations

from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphFeature, GraphRegistry
from lgos.testing import ScriptedFakeChatModel

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
