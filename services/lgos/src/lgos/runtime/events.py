"""Neutral run events: what a graph run produces, before any protocol encodes it."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

IncompleteReason = Literal["length", "content_filter"]
"""Why the final assistant message stopped early (LangChain/Chat ``finish_reason`` terms)."""


@dataclass(slots=True)
class Usage:
    """Token counts summed over every model call of one run that reported them."""

    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0

    def add(self, other: Usage) -> None:
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.total_tokens += other.total_tokens
        self.cached_tokens += other.cached_tokens
        self.reasoning_tokens += other.reasoning_tokens


@dataclass(slots=True)
class TextDelta:
    """A piece of public assistant answer text, in order."""

    text: str


@dataclass(slots=True)
class StatusUpdate:
    """A transient progress line published with ``status_event()``."""

    description: str


@dataclass(frozen=True, slots=True)
class Citation:
    """A ``url_citation`` over ``text[start_index : end_index + 1]`` of the final answer.

    ``end_index`` is the inclusive index of the cited span's last character.
    """

    url: str
    title: str
    start_index: int
    end_index: int


@dataclass(frozen=True, slots=True)
class FunctionCall:
    """A client function call the final message asks the client to execute.

    ``arguments`` is a JSON string when ``complete``; a truncated call keeps its raw text.
    """

    call_id: str
    name: str
    arguments: str
    complete: bool = True


ServerToolKind = Literal["custom", "web_search"]
"""How a registered server tool appears on the wire: a custom tool call or a web search."""


@dataclass(slots=True)
class ToolActivity:
    """One selected server tool call made by the root graph, and its result once it has one.

    ``input`` is the custom tool's free-form input, or the search query.
    """

    call_id: str
    name: str
    kind: ServerToolKind
    input: str
    output: str | None = None


@dataclass(slots=True)
class ToolEvent:
    """A selected server tool was called or, once ``returned``, has its result."""

    activity: ToolActivity
    returned: bool = False


@dataclass(slots=True)
class RunOutcome:
    """The canonical result of a finished run: the final assistant message, rendered."""

    text: str
    refusal: str | None = None
    incomplete_reason: IncompleteReason | None = None
    usage: Usage | None = None
    citations: list[Citation] = field(default_factory=list)
    function_calls: list[FunctionCall] = field(default_factory=list)
    tool_activity: list[ToolActivity] = field(default_factory=list)


RunEvent = TextDelta | StatusUpdate | ToolEvent | RunOutcome
"""What ``GraphRunner.stream`` yields; a ``RunOutcome`` is always last."""
