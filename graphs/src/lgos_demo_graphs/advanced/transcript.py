"""Reading the conversation as text: latest request, recent turns, attachment markers.

Routing and drafting see attachments only as ``[attachment file-…]`` markers: no bytes are
downloaded before the answering (or note-drafting) node needs them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

RECENT_TURNS = 6


def text_with_markers(message: BaseMessage) -> str:
    if isinstance(message.content, str):
        return message.content
    parts: list[str] = []
    for block in message.content:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict):
            parts.append(_block_text(block))
    return " ".join(p for p in parts if p)


def _block_text(block: dict[str, Any]) -> str:
    if block.get("type") == "file" and isinstance(block.get("file_id"), str):
        return f"[attachment {block['file_id']}]"
    text = block.get("text")
    return text if isinstance(text, str) else ""


def latest_request(messages: Sequence[BaseMessage]) -> str | None:
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return text_with_markers(message)
    return None


def latest_file_ids(messages: Sequence[BaseMessage]) -> list[str]:
    """The attachments of the latest user request."""
    for message in reversed(messages):
        if isinstance(message, HumanMessage):
            return file_ids(message)
    return []


def recent_turns(messages: Sequence[BaseMessage]) -> list[str]:
    """The turns before the latest request, as ``role: text`` lines."""
    humans = [i for i, m in enumerate(messages) if isinstance(m, HumanMessage)]
    earlier = messages[: humans[-1]] if humans else messages
    lines = []
    for message in earlier:
        if isinstance(message, HumanMessage | AIMessage):
            text = text_with_markers(message).strip()
            if text:
                lines.append(
                    f"{'user' if isinstance(message, HumanMessage) else 'assistant'}: {text}"
                )
    return lines[-RECENT_TURNS:]


def ends_with_tool_result(messages: Sequence[BaseMessage]) -> bool:
    """The client just returned a function's output: the conversation continues that call."""
    return bool(messages) and isinstance(messages[-1], ToolMessage)


def file_ids(message: BaseMessage) -> list[str]:
    if isinstance(message.content, str):
        return []
    return [
        block["file_id"]
        for block in message.content
        if isinstance(block, dict) and block.get("type") == "file"
    ]
