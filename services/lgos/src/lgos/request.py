"""The protocol-neutral request both decoders produce and graph adapters receive."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage

from lgos.config import ClientSettings

Protocol = Literal["responses", "chat"]
"""Which OpenAI API the request arrived on."""

ToolChoice = Literal["none", "auto", "required"] | Mapping[str, Any]
"""``none``/``auto``/``required``, or a named ``{"type": "function"|"custom", "name": ...}``."""


@dataclass(frozen=True, kw_only=True)
class GraphRequest:
    """One graph invocation, as the graph's adapters see it.

    ``messages`` are LangChain messages decoded from Responses items or Chat messages, with
    ``instructions`` (Responses) already prepended as a system message. ``metadata`` holds the
    client's non-LGOS metadata unchanged; ``settings`` is the validated ``ClientSettings``.
    """

    model: str
    protocol: Protocol
    messages: Sequence[BaseMessage]
    stream: bool = False
    metadata: Mapping[str, str] = field(default_factory=dict)
    conversation_id: str | None = None
    settings: ClientSettings | None = None
    tools: Sequence[Mapping[str, Any]] = ()
    tool_choice: ToolChoice | None = None
    server_tools: Sequence[str] = ()
    instructions: str | None = None
