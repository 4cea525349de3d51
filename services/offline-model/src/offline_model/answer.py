"""What the model was sent (:class:`Prompt`), the debug echo answer, and token counting."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from offline_model.images import Image

MODEL_NAME = "offline-model"
LABEL = "[offline-model: deterministic stand-in, not a real model]"

_TOKEN = re.compile(r"\s*\S+")


@dataclass(slots=True)
class Prompt:
    """The text of a request, by role, in order."""

    instructions: list[str] = field(default_factory=list)
    user: list[str] = field(default_factory=list)
    assistant: list[str] = field(default_factory=list)
    tool_outputs: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    images: list[Image] = field(default_factory=list)
    """The image parts of the latest user message, in order."""
    documents: list[str] = field(default_factory=list)
    """The latest user message's file parts carrying their bytes, described."""
    ends_with_tool_output: bool = False
    """The last thing the model was sent is a tool result: time to answer, not to call."""

    @property
    def latest(self) -> str:
        return self.user[-1] if self.user else ""


def echo_answer(prompt: Prompt) -> str:
    """Debug: the latest message, every instruction, tool output, file id, image and file
    part, the history size."""
    parts = [f'{LABEL} You said: "{prompt.latest}".']
    if prompt.instructions:
        joined = " | ".join(prompt.instructions)
        parts.append(f'Instructions: "{joined}".')
    if prompt.tool_outputs:
        joined = " | ".join(prompt.tool_outputs)
        parts.append(f'Tool outputs: "{joined}".')
    if prompt.files:
        parts.append(f"Files: {', '.join(prompt.files)}.")
    if prompt.images:
        parts.append(f"Images: {'; '.join(image.describe() for image in prompt.images)}.")
    if prompt.documents:
        parts.append(f"File inputs: {'; '.join(prompt.documents)}.")
    earlier = len(prompt.user) - 1 + len(prompt.assistant)
    if earlier > 0:
        parts.append(f"Earlier messages: {earlier}.")
    return " ".join(parts)


def tokenize(text: str) -> list[str]:
    """Stream pieces that concatenate back to ``text`` exactly."""
    pieces = _TOKEN.findall(text)
    consumed = sum(len(p) for p in pieces)
    if consumed < len(text):
        pieces.append(text[consumed:])
    return pieces


def count_tokens(texts: list[str]) -> int:
    return sum(len(_TOKEN.findall(t)) for t in texts)
