"""background-report: a multi-step report meant for background Responses.

Statuses mark each step, a few seconds of (simulated) work pass, and the answer quotes the
request it reports on. ``DEMO_API_REPORT_STEP_SECONDS`` sets the work per step (default 1 s).
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphFeature, status_event

from lgos_demo_graphs.model import chat_model

STEPS = ("Collecting sources", "Analysing findings", "Writing the report")


def step_seconds() -> float:
    return float(os.environ.get("DEMO_API_REPORT_STEP_SECONDS", "1.0"))


def build() -> Pregel[Any, Any, Any, Any]:
    model = chat_model()

    async def work(state: MessagesState) -> dict[str, object]:
        for step in STEPS[:-1]:
            status_event(step)
            await asyncio.sleep(step_seconds())
        status_event(STEPS[-1])
        return {}

    async def report(state: MessagesState) -> dict[str, object]:
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("work", work)
    builder.add_node("report", report)
    builder.add_edge(START, "work")
    builder.add_edge("work", "report")
    return builder.compile(name="background-report")


CONFIG = GraphConfig(
    graph=build,
    description="Writes a multi-step report; run it with background=true and poll.",
    features=frozenset({GraphFeature.BACKGROUND, GraphFeature.CLIENT_EVENTS}),
)
