"""``answer``: the one token-streaming call, where attachments are resolved for the model.

Attachments become text, image or file input only in this node's prompt (the checkpoint keeps their
ids; ``attachments`` says how each kind is read, and a limit hit is passed on to the user). Client
functions are bound unless ``tool_choice="none"``; Web results are cited by exact URL.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, SystemMessage
from langgraph.runtime import Runtime

from lgos_demo_graphs.advanced import prompts
from lgos_demo_graphs.advanced.attachments import FileLimits, resolve_attachments
from lgos_demo_graphs.advanced.context import AdvancedContext, AdvancedNode
from lgos_demo_graphs.advanced.research import evidence_messages, has_evidence
from lgos_demo_graphs.advanced.services import Services
from lgos_demo_graphs.advanced.state import AdvancedState
from lgos_demo_graphs.citations import cite_exact_urls
from lgos_demo_graphs.client_tools import with_client_tools
from lgos_demo_graphs.web_search import sources_of


def make_answer(
    services: Services,
) -> AdvancedNode:
    async def answer(state: AdvancedState, runtime: Runtime[AdvancedContext]) -> dict[str, Any]:
        context = runtime.context or AdvancedContext()
        messages: list[AnyMessage] = state.get("messages", [])
        intent = state.get("intent", "chat")
        system: list[BaseMessage] = [SystemMessage(prompts.ANSWER)]
        if intent in ("research", "research_and_save") and not has_evidence(messages):
            system.append(SystemMessage(prompts.NO_EVIDENCE))
        if state.get("note_outcome"):
            system.append(SystemMessage(prompts.TELL_THE_USER + state["note_outcome"]))
        resolved = await resolve_attachments(
            messages, services.files, FileLimits.of(services.settings, for_model=True)
        )
        system.extend(SystemMessage(prompts.TELL_THE_USER + n) for n in resolved.notices)
        tools = () if context.disabled else context.tools
        # The client's forced choice picked the chat path; elsewhere functions are optional.
        choice = context.tool_choice if intent == "chat" else None
        model = with_client_tools(services.answer_model, tools, choice)
        reply = await model.ainvoke([*system, *resolved.messages])
        if not isinstance(reply, AIMessage):
            raise TypeError(f"the answer model returned {type(reply).__name__}, not an AIMessage")
        sources = [
            source
            for message in evidence_messages(messages)
            if message.name == "web_search"
            for source in sources_of(message.artifact)
        ]
        return {"messages": [cite_exact_urls(reply, sources)]}

    return answer
