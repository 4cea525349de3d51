"""Reading the canonical outcome (text, refusal, incomplete reason) off the final AIMessage."""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage

from lgos.runtime.events import IncompleteReason, RunOutcome, Usage

_RESPONSES_REASONS: dict[str, IncompleteReason] = {
    "max_output_tokens": "length",
    "content_filter": "content_filter",
}


def refusal_of(message: AIMessage) -> str | None:
    """A refusal from content blocks, or from the OpenAI Chat provider's ``additional_kwargs``."""
    parts: list[str] = []
    if isinstance(message.content, list):
        for block in message.content:
            if isinstance(block, dict) and block.get("type") == "refusal":
                refusal = block.get("refusal") or block.get("text")
                if isinstance(refusal, str):
                    parts.append(refusal)
    if not parts:
        refusal = message.additional_kwargs.get("refusal")
        if isinstance(refusal, str) and refusal:
            parts.append(refusal)
    return "".join(parts) if parts else None


def incomplete_reason_of(message: AIMessage) -> IncompleteReason | None:
    """Chat ``finish_reason`` or Responses ``incomplete_details`` kept in ``response_metadata``."""
    metadata: dict[str, Any] = message.response_metadata or {}
    finish_reason = metadata.get("finish_reason")
    if finish_reason in ("length", "content_filter"):
        return finish_reason  # type: ignore[no-any-return]
    if metadata.get("status") == "incomplete":
        details = metadata.get("incomplete_details") or {}
        return _RESPONSES_REASONS.get(str(details.get("reason")), "length")
    return None


def outcome_of(message: AIMessage | None, usage: Usage | None) -> RunOutcome:
    if message is None:
        return RunOutcome(text="", usage=usage)
    return RunOutcome(
        text=message.text,
        refusal=refusal_of(message),
        incomplete_reason=incomplete_reason_of(message),
        usage=usage,
    )
