"""Reviews as Open WebUI's persisted ask-user card, answered on the card or in the next message."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from lgos_ui.open_webui.history import message_text
from lgos_ui.review import InterruptCall

ASK_USER = "ask_user"
"""Open WebUI's own question card (0.12): a pending function call it persists in the chat."""
REVIEW_QUESTION_ID = "review"


def ask_user_arguments(call: InterruptCall) -> dict[str, Any] | None:
    """The card for one interrupt, or ``None`` when its choices don't fit (2-3 options)."""
    choices = call.choices
    if not 2 <= len(choices) <= 3:
        return None
    descriptions = {
        "approve": "Go ahead as drafted.",
        "reject": "Discard it; nothing is stored.",
    }
    return {
        "questions": [
            {
                "id": REVIEW_QUESTION_ID,
                "header": "Review",
                "question": call.question[:500],
                "options": [
                    {
                        "label": choice[:80],
                        "description": descriptions.get(choice.lower(), f"Answer {choice!r}."),
                    }
                    for choice in choices
                ],
                "allow_other": call.allow_other,
            }
        ],
        "allow_other": call.allow_other,
        # The longest Open WebUI allows; a card that times out leaves the review open anyway.
        "timeout_ms": 240_000,
    }


def ask_user_chunk(model: str, call_id: str, arguments: Mapping[str, Any]) -> dict[str, Any]:
    """A chat-completion chunk with one ``ask_user`` tool call: Open WebUI stages it as a card,
    saves the chat and stops; the answer comes back as a tool message on the next request."""
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex}",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "delta": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": call_id,
                            "type": "function",
                            "function": {"name": ASK_USER, "arguments": json.dumps(arguments)},
                        }
                    ],
                },
                "finish_reason": None,
            }
        ],
    }


def card_answer(messages: Sequence[Mapping[str, Any]]) -> str | None:
    """The person's answer on the card, when this request resumes from it (else ``None``).

    Open WebUI replays the card as an assistant ``tool_calls`` message and a ``tool`` message
    whose content is ``{"status": "answered", "answers": {...}}``; the last message decides.
    """
    if not messages or messages[-1].get("role") != "tool":
        return None
    content = message_text(messages[-1].get("content"))
    try:
        payload = json.loads(content)
    except ValueError:
        # "Error: tool call rejected by user." — the card was dismissed, not answered.
        return ""
    if not isinstance(payload, Mapping):
        return None
    if payload.get("status") != "answered":
        return ""  # cancelled or timed out: the review stays pending
    answers = payload.get("answers")
    value = answers.get(REVIEW_QUESTION_ID) if isinstance(answers, Mapping) else None
    if value is None and isinstance(answers, Mapping) and answers:
        value = next(iter(answers.values()))
    return _answer_string(value)


def _answer_string(value: Any) -> str | None:
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, list):
        parts = [s for s in (_answer_string(v) for v in value) if s]
        return ", ".join(parts) if parts else None
    if isinstance(value, Mapping):
        for key in ("other", "text", "custom", "value", "label", "answer", "selected", "answers"):
            found = _answer_string(value.get(key))
            if found:
                return found
    return None


def review_markdown(call: InterruptCall) -> str:
    """What the person reviews, in the chat as Markdown (the card holds only the question)."""
    parts = [f"### Review requested\n\n**{call.question}**"]
    content = call.content_markdown()
    if content:
        parts.append(content)
    hint = "Answer on the card below"
    if call.allow_other:
        hint += " (type a revision under *Other*)"
    hint += "; if you dismiss it, answer in your next message: " + " / ".join(
        f"`{c}`" for c in call.choices
    )
    if call.allow_other:
        hint += " or what to change"
    parts.append(f"_{hint}._")
    return "\n\n".join(parts)
