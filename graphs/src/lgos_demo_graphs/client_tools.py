"""Binding the client's functions (``GraphRequest.tools``) to a LangChain chat model."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable


def openai_function(tool: Mapping[str, Any]) -> dict[str, Any]:
    """LGOS's flat function definition in the nested shape ``bind_tools`` takes."""
    function: dict[str, Any] = {"name": tool["name"], "parameters": tool["parameters"]}
    if tool.get("description"):
        function["description"] = tool["description"]
    if tool.get("strict") is not None:
        function["strict"] = tool["strict"]
    return {"type": "function", "function": function}


def langchain_tool_choice(choice: Any) -> str | None:
    if isinstance(choice, Mapping):
        return str(choice["name"])
    return None if choice is None else str(choice)


def with_client_tools(
    model: BaseChatModel, tools: Sequence[Mapping[str, Any]], choice: Any
) -> Runnable[Sequence[BaseMessage], BaseMessage]:
    """The model itself when the client offered no functions."""
    if not tools:
        return model
    return model.bind_tools(
        [openai_function(t) for t in tools], tool_choice=langchain_tool_choice(choice)
    )
