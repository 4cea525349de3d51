"""simple-graph: one model call, with history and audience as public settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from lgos import ClientSettings, GraphConfig, GraphFeature, GraphRequest
from pydantic import Field

from lgos_demo_graphs.client_tools import with_client_tools
from lgos_demo_graphs.model import chat_model


class SimpleSettings(ClientSettings):
    use_history: bool = Field(
        default=False, description="Send earlier turns to the model, not only the latest message."
    )
    audience: Literal["general", "beginner", "expert"] = Field(
        default="general", description="Who the answer is written for."
    )


@dataclass(frozen=True)
class SimpleContext:
    """Runtime context: the validated settings plus the client's functions for this request."""

    settings: SimpleSettings
    tools: Sequence[Mapping[str, Any]] = ()
    tool_choice: Any = None


def simple_context(request: GraphRequest, settings: ClientSettings | None) -> SimpleContext:
    assert isinstance(settings, SimpleSettings)
    return SimpleContext(settings, request.tools, request.tool_choice)


def prompt_for(messages: Sequence[BaseMessage], settings: SimpleSettings) -> list[BaseMessage]:
    """Without history the model sees only the latest turn: the last user message and any
    tool calls and results that followed it."""
    system = SystemMessage(f"Write the answer for a {settings.audience} audience.")
    client_system = [m for m in messages if isinstance(m, SystemMessage)]
    turns: list[BaseMessage] = [m for m in messages if not isinstance(m, SystemMessage)]
    if not settings.use_history:
        starts = [i for i, m in enumerate(turns) if isinstance(m, HumanMessage)]
        turns = turns[starts[-1] :] if starts else turns
    return [system, *client_system, *turns]


def build() -> Pregel[Any, Any, Any, Any]:
    model = chat_model()

    async def answer(state: MessagesState, runtime: Runtime[SimpleContext]) -> dict[str, object]:
        context = runtime.context or SimpleContext(SimpleSettings())
        bound = with_client_tools(model, context.tools, context.tool_choice)
        reply = await bound.ainvoke(prompt_for(state["messages"], context.settings))
        return {"messages": [reply]}

    builder = StateGraph(MessagesState, context_schema=SimpleContext)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder.compile(name="simple-graph")


CONFIG = GraphConfig(
    graph=build,
    description="Streams responses with configurable history and audience.",
    client_settings=SimpleSettings,
    features=frozenset({GraphFeature.MCP_TOOLS}),
    context_factory=simple_context,
)
