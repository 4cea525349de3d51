"""server-tools: client-selected server tools run inside the graph, then a cited answer.

A private selection node (its model call tagged ``nostream``) binds only the selected tools; a
native ``ToolNode`` holding only those tools runs the calls, in parallel when there are several;
the answer node streams and cites exact URLs the search returned.
"""

from __future__ import annotations

import importlib.metadata
import re
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import AIMessage, ToolMessage
from langchain_core.tools import BaseTool
from langchain_openai import custom_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from lgos import ClientSettings, GraphConfig, GraphFeature, GraphRequest, status_event

from lgos_demo_graphs.citations import cite_exact_urls
from lgos_demo_graphs.client_tools import langchain_tool_choice
from lgos_demo_graphs.model import chat_model
from lgos_demo_graphs.web_search import sources_of, web_search

_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


@custom_tool
def package_version(input: str) -> str:
    """Report the installed versions of the Python packages named in the free-form input."""
    found = []
    for token in dict.fromkeys(_NAME.findall(input)):
        try:
            found.append(f"{token}=={importlib.metadata.version(token)}")
        except importlib.metadata.PackageNotFoundError:
            continue
    return ", ".join(found) if found else f"No installed package is named in: {input}"


TOOLS: dict[str, BaseTool] = {"package_version": package_version, "web_search": web_search}


@dataclass(frozen=True)
class ServerToolsContext:
    selected: tuple[str, ...] = ()
    tool_choice: Any = None


def server_tools_context(
    request: GraphRequest, settings: ClientSettings | None
) -> ServerToolsContext:
    return ServerToolsContext(tuple(request.server_tools), request.tool_choice)


def _selected(runtime: Runtime[ServerToolsContext]) -> ServerToolsContext:
    return runtime.context or ServerToolsContext()


def build() -> Pregel[Any, Any, Any, Any]:
    # Responses API: custom tools (free-form input) exist only there.
    selector = chat_model(use_responses_api=True)
    answerer = chat_model(use_responses_api=True)

    async def select(
        state: MessagesState, runtime: Runtime[ServerToolsContext]
    ) -> dict[str, object]:
        context = _selected(runtime)
        tools = [TOOLS[name] for name in context.selected]
        bound = selector.bind_tools(
            tools, tool_choice=langchain_tool_choice(context.tool_choice)
        ).with_config(tags=["nostream"])
        return {"messages": [await bound.ainvoke(state["messages"])]}

    def route(
        state: MessagesState, runtime: Runtime[ServerToolsContext]
    ) -> Literal["select", "answer"]:
        return "select" if _selected(runtime).selected else "answer"

    def after_select(state: MessagesState) -> Literal["tools", "answer"]:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "answer"

    async def run_tools(
        state: MessagesState, runtime: Runtime[ServerToolsContext]
    ) -> dict[str, object]:
        selected = _selected(runtime).selected
        if "web_search" in selected:
            status_event("Searching the web")
        node = ToolNode([TOOLS[name] for name in selected])
        # The run's config (callbacks, stream writer) reaches the ToolNode through the context.
        result: dict[str, object] = await node.ainvoke(state)
        return result

    async def answer(state: MessagesState) -> dict[str, object]:
        reply = await answerer.ainvoke(state["messages"])
        sources = [
            source
            for message in state["messages"]
            if isinstance(message, ToolMessage) and message.name == "web_search"
            for source in sources_of(message.artifact)
        ]
        return {"messages": [cite_exact_urls(reply, sources)]}

    builder = StateGraph(MessagesState, context_schema=ServerToolsContext)
    builder.add_node("select", select)
    builder.add_node("tools", run_tools)
    builder.add_node("answer", answer)
    builder.add_conditional_edges(START, route)
    builder.add_conditional_edges("select", after_select)
    builder.add_edge("tools", "answer")
    builder.add_edge("answer", END)
    return builder.compile(name="server-tools")


CONFIG = GraphConfig(
    graph=build,
    description="Runs the selected server tools (package_version, web_search) and cites sources.",
    features=frozenset({GraphFeature.CLIENT_EVENTS}),
    server_tools=sorted(TOOLS),
    context_factory=server_tools_context,
)
