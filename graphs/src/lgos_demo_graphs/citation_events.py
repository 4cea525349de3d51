"""citation-events: an answer with structured ``url_citation``s over exact spans."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig

from lgos_demo_graphs.citations import Source, cite_exact_urls
from lgos_demo_graphs.model import chat_model

SOURCES = (
    Source(
        "https://docs.langchain.com/oss/python/langgraph/persistence",
        "LangGraph persistence",
    ),
    Source(
        "https://docs.langchain.com/oss/python/langgraph/interrupts",
        "LangGraph interrupts",
    ),
)


def build() -> Pregel[Any, Any, Any, Any]:
    model = chat_model()
    listing = " ".join(f"[{i}] {s.title}: {s.url}" for i, s in enumerate(SOURCES, 1))
    instructions = SystemMessage(
        f"Answer from these sources and quote the URL of each source you use. {listing}"
    )

    async def answer(state: MessagesState) -> dict[str, object]:
        reply = await model.ainvoke([instructions, *state["messages"]])
        return {"messages": [cite_exact_urls(reply, SOURCES)]}

    builder = StateGraph(MessagesState)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder.compile(name="citation-events")


CONFIG = GraphConfig(
    graph=build,
    description="Answers from fixed sources with url_citation annotations over exact spans.",
)
