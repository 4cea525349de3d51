"""Graphs that say which server process ran them, for tests of several LGOS processes.

``lgos serve tests.support.process_graphs:create_registry --workers 2`` serves them; each process
builds its own graphs, so the pid in an answer is the pid of the process that ran the request.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.types import interrupt
from lgos import GraphConfig, GraphFeature, GraphRegistry
from lgos.testing import ScriptedFakeChatModel

TARGET = "tests.support.process_graphs:create_registry"
LOOP_HOLD = 0.02
"""Seconds each request holds its process's event loop: a busy process accepts no connection
meanwhile, so racing requests spread over the processes as they would under real load."""


class ReviewState(MessagesState):
    asked_in: int


def serving_process(delay: float = 0.0) -> Any:
    """Answers 'Served by process <pid>.', piece by piece (``delay`` seconds per piece)."""
    model = ScriptedFakeChatModel.saying(f"Served by process {os.getpid()}.", delay=delay)

    async def node(state: MessagesState) -> dict[str, Any]:
        time.sleep(LOOP_HOLD)  # noqa: ASYNC251 (on purpose: this process's loop is busy)
        return {"messages": [await model.ainvoke(state["messages"])]}

    builder = StateGraph(MessagesState)
    builder.add_node("node", node)
    builder.add_edge(START, "node")
    return builder.compile()


def process_review() -> Any:
    """Pauses for a review; the answer names the process that paused and the one that resumed."""

    def note(state: ReviewState) -> dict[str, Any]:
        return {"asked_in": os.getpid()}

    def ask(state: ReviewState) -> dict[str, Any]:
        decision = interrupt({"question": "Approve?", "asked_in": state["asked_in"]})
        text = f"Asked in process {state['asked_in']}, answered in process {os.getpid()}: "
        return {"messages": [AIMessage(content=f"{text}{decision}")]}

    builder = StateGraph(ReviewState)
    builder.add_node("note", note)
    builder.add_node("ask", ask)
    builder.add_edge(START, "note")
    builder.add_edge("note", "ask")
    return builder.compile()


def pids(text: str) -> list[int]:
    """The process ids an answer of these graphs names, in order."""
    return [int(found) for found in re.findall(r"process (\d+)", text)]


def create_registry() -> GraphRegistry:
    return GraphRegistry.of(
        {
            "serving-process": GraphConfig(graph=serving_process, description="Names its process."),
            "serving-process-slow": GraphConfig(
                graph=lambda: serving_process(delay=0.25),
                description="Names its process, slowly.",
            ),
            "process-review": GraphConfig(
                graph=process_review,
                description="A review that names both processes.",
                features=frozenset({GraphFeature.INTERRUPTS}),
            ),
        }
    )
