"""``answer``: the one token-streaming call, and the only place attachments are resolved.

Attachments become text only in this node's prompt (the checkpoint keeps their ids). Client
functions are bound unless ``tool_choice="none"``; Web results are cited by exact URL.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import openai
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, SystemMessage
from langgraph.runtime import Runtime

from lgos_demo_graphs.advanced import prompts
from lgos_demo_graphs.advanced.context import AdvancedContext, AdvancedNode
from lgos_demo_graphs.advanced.knowledge import FileReader
from lgos_demo_graphs.advanced.research import evidence_messages, has_evidence
from lgos_demo_graphs.advanced.services import Services
from lgos_demo_graphs.advanced.state import AdvancedState
from lgos_demo_graphs.citations import cite_exact_urls
from lgos_demo_graphs.client_tools import with_client_tools
from lgos_demo_graphs.web_search import sources_of


async def _attachment_text(files: FileReader, file_id: str, max_chars: int) -> str:
    try:
        attachment = await files.read(file_id, max_chars)
    except openai.NotFoundError:
        return f"\n\n[Attached file {file_id}: not found in the Files service.]\n"
    if attachment.text is None:
        return (
            f"\n\n[Attached file {attachment.filename} ({file_id}): {attachment.size} bytes "
            "that are not text, not shown.]\n"
        )
    return f"\n\nAttached file {attachment.filename} ({file_id}):\n{attachment.text}\n"


async def resolve_attachments(
    messages: Sequence[BaseMessage], files: FileReader, max_chars: int
) -> list[BaseMessage]:
    """The messages with each ``input_file`` replaced by its content as text."""
    resolved: list[BaseMessage] = []
    for message in messages:
        if not isinstance(message, HumanMessage) or isinstance(message.content, str):
            resolved.append(message)
            continue
        blocks: list[Any] = []
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "file":
                text = await _attachment_text(files, str(block["file_id"]), max_chars)
                blocks.append({"type": "text", "text": text})
            else:
                blocks.append(block)
        resolved.append(message.model_copy(update={"content": blocks}))
    return resolved


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
        tools = () if context.disabled else context.tools
        # The client's forced choice picked the chat path; elsewhere functions are optional.
        choice = context.tool_choice if intent == "chat" else None
        model = with_client_tools(services.answer_model, tools, choice)
        prompt = await resolve_attachments(
            messages, services.files, services.settings.max_attachment_chars
        )
        reply = await model.ainvoke([*system, *prompt])
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
