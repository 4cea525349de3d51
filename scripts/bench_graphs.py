"""The benchmark's graphs: trivial, with a fake streaming chat model (no network).

``lgos serve scripts.bench_graphs:create_registry`` serves exactly the graphs the benchmark also
runs in-process, so both sides do the same work.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun
from langchain_core.messages import AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGenerationChunk
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphRegistry

from tests.support.fake_model import ScriptedChatModel

SHORT_TEXT = "A short answer."
STREAM_CHUNKS = 200
USAGE = {"input_tokens": 5, "output_tokens": STREAM_CHUNKS, "total_tokens": STREAM_CHUNKS + 5}


class YieldingChatModel(ScriptedChatModel):
    """Yields to the event loop between pieces, as a model streaming from a socket does."""

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        last = len(self.pieces) - 1
        for index, piece in enumerate(self.pieces):
            await asyncio.sleep(0)
            message = AIMessageChunk(
                content=piece, usage_metadata=self.usage if index == last else None
            )
            chunk = ChatGenerationChunk(message=message)
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk


def build(model: ScriptedChatModel) -> Pregel[Any, Any, Any, Any]:
    async def answer(state: MessagesState) -> dict[str, Any]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder.compile()


def short_graph() -> Pregel[Any, Any, Any, Any]:
    return build(YieldingChatModel.saying(SHORT_TEXT, usage=USAGE))


def stream_graph() -> Pregel[Any, Any, Any, Any]:
    pieces = [f"w{i} " for i in range(STREAM_CHUNKS)]
    return build(YieldingChatModel(pieces=pieces, usage=USAGE))


def create_registry() -> GraphRegistry:
    return GraphRegistry.of(
        {
            "bench-short": GraphConfig(graph=short_graph, description="Short answer."),
            "bench-stream": GraphConfig(graph=stream_graph, description="200-chunk answer."),
        }
    )
