"""response-outcomes: a refusal, an incomplete answer or a failure on request.

For tests and demos of the terminal outcomes clients must handle. The outcome is a public
setting: ``metadata.lgos_settings = '{"outcome": "refusal"}'``.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.messages import AIMessage
from langgraph.graph import START, MessagesState, StateGraph
from langgraph.pregel import Pregel
from langgraph.runtime import Runtime
from lgos import ClientSettings, GraphConfig
from pydantic import Field

from lgos_demo_graphs.model import chat_model

REFUSAL = "I can't help with that request."
INCOMPLETE_TOKENS = 6


class OutcomeSettings(ClientSettings):
    outcome: Literal["answer", "refusal", "incomplete", "failure"] = Field(
        default="answer", description="Which terminal outcome the graph produces."
    )


class DemoFailure(RuntimeError):
    """The failure the graph raises on request, after part of the answer has streamed."""


def build() -> Pregel[Any, Any, Any, Any]:
    model = chat_model()
    # A real model call capped at a few tokens: the provider reports finish_reason "length".
    truncated_model = chat_model(max_completion_tokens=INCOMPLETE_TOKENS)

    async def respond(state: MessagesState, runtime: Runtime[OutcomeSettings]) -> dict[str, object]:
        outcome = (runtime.context or OutcomeSettings()).outcome
        if outcome == "refusal":
            # The shape ChatOpenAI gives a provider refusal.
            return {"messages": [AIMessage(content="", additional_kwargs={"refusal": REFUSAL})]}
        if outcome == "incomplete":
            return {"messages": [await truncated_model.ainvoke(state["messages"])]}
        reply = await model.ainvoke(state["messages"])
        if outcome == "failure":
            raise DemoFailure("requested failure after a partial answer")
        return {"messages": [reply]}

    builder = StateGraph(MessagesState, context_schema=OutcomeSettings)
    builder.add_node("respond", respond)
    builder.add_edge(START, "respond")
    return builder.compile(name="response-outcomes")


CONFIG = GraphConfig(
    graph=build,
    description="Answers, refuses, stops early or fails on request, to show terminal outcomes.",
    client_settings=OutcomeSettings,
)
