"""LangChain messages in the shape of the GenAI conventions' ``gen_ai.input.messages`` and
``gen_ai.output.messages``, for spans that record message content (an opt-in).

A message is ``{"role", "parts"}``; an output message adds ``finish_reason``. Parts are
``text`` (``content``), ``tool_call`` (``id``, ``name``, ``arguments``) and
``tool_call_response`` (``id``, ``response``); a part of any other kind (an image, a file,
reasoning) is recorded by its type only, never its bytes. Spans hold them as JSON strings, as the
conventions allow where attributes cannot be structured.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _content_parts(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "content": content}] if content else []
    parts: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        if isinstance(block, str):
            parts.append({"type": "text", "content": block})
        elif isinstance(block, dict) and block.get("type") == "text":
            parts.append({"type": "text", "content": str(block.get("text", ""))})
        elif isinstance(block, dict):
            parts.append({"type": str(block.get("type", "unknown"))})
    return parts


def message(msg: BaseMessage) -> dict[str, Any]:
    """One message as the conventions' ChatMessage."""
    role = _ROLES.get(msg.type, msg.type)
    parts: list[dict[str, Any]]
    if isinstance(msg, ToolMessage):
        response = msg.content if isinstance(msg.content, str) else _content_parts(msg.content)
        parts = [{"type": "tool_call_response", "id": msg.tool_call_id, "response": response}]
    else:
        parts = _content_parts(msg.content)
    if isinstance(msg, AIMessage):
        parts += [
            {"type": "tool_call", "id": c.get("id"), "name": c["name"], "arguments": c["args"]}
            for c in msg.tool_calls
        ]
    return {"role": role, "parts": parts}


def input_messages(messages: Sequence[BaseMessage]) -> str:
    return orjson.dumps([message(m) for m in messages], default=str).decode()


def output_messages(messages: Sequence[BaseMessage]) -> str:
    """The messages the model returned, one per choice."""
    return orjson.dumps(
        [{**message(m), "finish_reason": finish_reason(m)} for m in messages], default=str
    ).decode()


def finish_reason(msg: BaseMessage) -> str:
    """The conventions' finish reason: ``tool_call`` when it calls tools; ``stop`` for a
    finished answer (a Responses-API model says ``completed``); else what the model said."""
    if isinstance(msg, AIMessage) and msg.tool_calls:
        return "tool_call"
    said = msg.response_metadata.get("finish_reason") or msg.response_metadata.get("status")
    return "stop" if said in (None, "", "completed") else str(said)
