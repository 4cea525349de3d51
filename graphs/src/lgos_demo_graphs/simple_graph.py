"""simple-graph: one model call, with history and audience as public settings."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from lgos import ClientSettings, GraphConfig
from pydantic import Field

from lgos_demo_graphs.model import chat_model


class SimpleSettings(ClientSettings):
    use_history: bool = Field(
        default=False, description="Send earlier turns to the model, not only the latest message."
    )
    audience: Literal["general", "beginner", "expert"] = Field(
        default="general", description="Who the answer is written for."
    )


def prompt_for(messages: Sequence[BaseMessage], settings: SimpleSettings) -> list[BaseMessage]:
    system = SystemMessage(f"Write the answer for a {settings.audience} audience.")
    client_system = [m for m in messages if isinstance(m, SystemMessage)]
    turns: list[BaseMessage] = [m for m in messages if not isinstance(m, SystemMessage)]
    if not settings.use_history:
        humans: list[BaseMessage] = [m for m in turns if isinstance(m, HumanMessage)]
        turns = humans[-1:]
    return [system, *client_system, *turns]


def build() -> Pregel[Any, Any, Any, Any]:
    model = chat_model()

    async def answer(state: MessagesState, runtime: Runtime[SimpleSettings]) -> dict[str, object]:
        settings = runtime.context or SimpleSettings()
        reply = await model.ainvoke(prompt_for(state["messages"], settings))
        return {"messages": [reply]}

    builder = StateGraph(MessagesState, context_schema=SimpleSettings)
    builder.add_node("answer", answer)
    builder.add_edge(START, "answer")
    return builder.compile(name="simple-graph")


CONFIG = GraphConfig(
    graph=build,
    description="Streams responses with configurable history and audience.",
    client_settings=SimpleSettings,
)
