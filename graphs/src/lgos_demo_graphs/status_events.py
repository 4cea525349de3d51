"""status-events: two progress statuses, then a streamed answer."""

from __future__ import annotations

from typing import Any

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphFeature, status_event

from lgos_demo_graphs.model import chat_model


def build() -> Pregel[Any, Any, Any, Any]:
    model = chat_model()

    async def plan(state: MessagesState) -> dict[str, object]:
        status_event("Reading the question")
        return {}

    async def research(state: MessagesState) -> dict[str, object]:
        status_event("Drafting the answer")
        return {}

    async def answer(state: MessagesState) -> dict[str, object]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("plan", plan)
    builder.add_node("research", research)
    builder.add_node("answer", answer)
    builder.add_edge(START, "plan")
    builder.add_edge("plan", "research")
    builder.add_edge("research", "answer")
    return builder.compile(name="status-events")


CONFIG = GraphConfig(
    graph=build,
    description="Publishes two progress statuses, then streams an answer.",
    features=frozenset({GraphFeature.CLIENT_EVENTS}),
)
