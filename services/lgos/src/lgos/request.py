"""The protocol-neutral request both decoders produce and graph adapters receive.

The adapter signatures over it live here too, so ``config`` depends on this module and never
the other way round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain_core.messages import BaseMessage
from pydantic import BaseModel, ConfigDict

Protocol = Literal["responses", "chat"]
"""Which OpenAI API the request arrived on."""

ToolChoice = Literal["none", "auto", "required"] | Mapping[str, Any]
"""``none``/``auto``/``required``, or a named ``{"type": "function"|"custom", "name": ...}``."""


class ClientSettings(BaseModel):
    """Base class of a graph's public, allowlisted per-request settings.

    Every field needs a default: the defaults are the advertised, validated baseline that a
    request's ``metadata.lgos_settings`` is shallow-merged over.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)


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


RequestToInput = Callable[[GraphRequest], Any]
"""Builds the graph's input state from the request (default: ``{"messages": [...]}``)."""

ContextFactory = Callable[[GraphRequest, ClientSettings | None], Any]
"""Builds the LangGraph runtime context from the request and its validated settings."""
