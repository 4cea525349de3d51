"""``route_intent`` and the edges between the graph's parts.

A forced ``tool_choice`` wins; otherwise a structured-output classification of the recent
conversation text (attachments as markers, never downloaded) picks one of the four paths.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime
from pydantic import BaseModel, Field

from lgos_demo_graphs.advanced import prompts
from lgos_demo_graphs.advanced.context import AdvancedContext, AdvancedNode
from lgos_demo_graphs.advanced.services import Services
from lgos_demo_graphs.advanced.state import AdvancedState, Intent
from lgos_demo_graphs.advanced.transcript import (
    ends_with_tool_result,
    latest_file_ids,
    latest_request,
    recent_turns,
)

NO_REQUEST = "There is no user request to answer: send a user message."


class Classification(BaseModel):
    """The workflow the latest request asks for."""

    intent: Intent = Field(description="chat unless the user asked to search and/or to save.")


def forced_intent(context: AdvancedContext, state: AdvancedState) -> Intent | None:
    """The path a forced ``tool_choice`` (or a returned function output) fixes, if any."""
    if ends_with_tool_result(state.get("messages", [])):
        return "chat"  # the answer continues the client's function call
    choice = context.tool_choice
    if isinstance(choice, Mapping):
        return "chat"  # a named client function
    if choice == "required":
        return "research" if context.web_search else "chat"
    return None


def without_search(intent: Intent) -> Intent:
    """``tool_choice="none"`` leaves no search: research falls back to chat, a save stays."""
    return {"research": "chat", "research_and_save": "save"}.get(intent, intent)  # type: ignore[return-value]


def make_route_intent(
    services: Services,
) -> AdvancedNode:
    classifier = services.private_model.with_structured_output(
        Classification, method="json_schema"
    ).with_config(tags=["nostream"], run_name="classify_intent")

    async def route_intent(
        state: AdvancedState, runtime: Runtime[AdvancedContext]
    ) -> dict[str, Any]:
        context = runtime.context or AdvancedContext()
        messages = state.get("messages", [])
        request = latest_request(messages)
        if request is None:
            return {"reply": AIMessage(NO_REQUEST)}
        recent = recent_turns(messages)
        intent = forced_intent(context, state)
        if intent is None:
            prompt: list[BaseMessage] = [SystemMessage(prompts.CLASSIFY)]
            if recent:
                prompt.append(HumanMessage("Earlier conversation:\n" + "\n".join(recent)))
            prompt.append(HumanMessage(request))
            result = await classifier.ainvoke(prompt)
            intent = Classification.model_validate(result).intent
        if context.disabled:
            intent = without_search(intent)
        attached = latest_file_ids(messages)
        return {"intent": intent, "request": request, "recent": recent, "attached": attached}

    return route_intent


def after_route(state: AdvancedState) -> Literal["answer", "research", "notebook", "__end__"]:
    if "reply" in state:
        return "__end__"
    intent = state["intent"]
    if intent in ("research", "research_and_save"):
        return "research"
    return "notebook" if intent == "save" else "answer"


def after_research(state: AdvancedState) -> Literal["answer", "notebook", "__end__"]:
    if "reply" in state:
        return "__end__"
    return "notebook" if state["intent"] == "research_and_save" else "answer"


def after_notebook(state: AdvancedState) -> Literal["answer", "__end__"]:
    """A save alone ends with the notebook's own reply; research and save goes on to answer."""
    return "__end__" if "reply" in state else "answer"
