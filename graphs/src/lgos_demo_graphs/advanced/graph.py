"""advanced-graph: chat, attachments, client tools, cited research and reviewed knowledge.

An explicit ``StateGraph``: ``route_intent`` picks a path, the ``research`` and ``notebook``
subgraphs do their work, and ``answer`` streams the reply. The compiled topology is the one the
spec draws (``get_graph(xray=True)``).
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage
from langgraph.graph import END, START, StateGraph
from langgraph.pregel import Pregel
from lgos import GraphConfig, GraphExample, GraphFeature

from lgos_demo_graphs.advanced.answer import make_answer
from lgos_demo_graphs.advanced.context import AdvancedContext, advanced_context
from lgos_demo_graphs.advanced.notebook import build_notebook
from lgos_demo_graphs.advanced.research import build_research
from lgos_demo_graphs.advanced.routing import (
    after_notebook,
    after_research,
    after_route,
    make_route_intent,
)
from lgos_demo_graphs.advanced.services import Services, default_services
from lgos_demo_graphs.advanced.state import AdvancedState

NAME = "advanced-graph"


def build(services: Services | None = None) -> Pregel[Any, Any, Any, Any]:
    services = services or default_services()
    builder = StateGraph(AdvancedState, context_schema=AdvancedContext)
    builder.add_node("route_intent", make_route_intent(services))
    builder.add_node("research", build_research(services))
    builder.add_node("notebook", build_notebook(services))
    builder.add_node("answer", make_answer(services))
    builder.add_edge(START, "route_intent")
    builder.add_conditional_edges(
        "route_intent", after_route, ["answer", "research", "notebook", END]
    )
    builder.add_conditional_edges("research", after_research, ["answer", "notebook", END])
    builder.add_conditional_edges("notebook", after_notebook, ["answer", END])
    builder.add_edge("answer", END)
    return builder.compile(name=NAME)


def final_message(state: Any) -> AIMessage | None:
    """The notebook's own reply when it ended the run, else the answer."""
    if not isinstance(state, dict):
        return None
    if isinstance(state.get("reply"), AIMessage):
        return state["reply"]  # type: ignore[no-any-return]
    for message in reversed(state.get("messages") or []):
        if isinstance(message, AIMessage):
            return message
    return None


EXAMPLES = (
    GraphExample(
        label="Chat",
        prompt="Explain why idempotency matters in two short sentences.",
    ),
    GraphExample(
        label="Ask about a file",
        prompt="What are the key points of the attached file?",
    ),
    GraphExample(
        label="Research the web",
        prompt="Search the web: how do LangGraph interrupts pause a run? Cite your sources.",
    ),
    GraphExample(
        label="Save a note",
        prompt="Remember this note: the staging password rotates every 30 days.",
    ),
    GraphExample(
        label="Find a saved note",
        prompt="Search my notes: how often does the staging password rotate?",
    ),
    GraphExample(
        label="Query the demo database",
        prompt="SELECT name, status FROM projects ORDER BY name -- demo db execute sql",
    ),
)
"""One starter per path: chat, an attachment, Web research, a reviewed save, a knowledge
search that finds the saved note, and the gateway's MCP demo database. Each runs offline."""

CONFIG = GraphConfig(
    graph=build,
    description=(
        "The showcase assistant: chat with files and your tools, research with Web and "
        "knowledge citations, and notes saved to shared knowledge after your review."
    ),
    features=frozenset(
        {
            GraphFeature.CLIENT_EVENTS,
            GraphFeature.FILE_INPUTS,
            GraphFeature.INTERRUPTS,
            GraphFeature.MCP_TOOLS,
        }
    ),
    server_tools=["web_search"],
    examples=EXAMPLES,
    context_factory=advanced_context,
    output_to_message=final_message,
)
