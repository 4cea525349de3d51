"""Reviews: a paused Response's ``lgos_interrupt`` calls, kept until a person answers them.

A UI persists a :class:`PendingReview` *before* it asks, so a reload or a restart can ask again.
The answer goes back as ``previous_response_id`` plus one string ``function_call_output`` per
pending call (the whole batch, the exact call ids, nothing else).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from lgos_ui.ledger import Item, function_output

INTERRUPT_TOOL = "lgos_interrupt"
APPROVE = "approve"
REJECT = "reject"
_ENVELOPE_KEYS = ("question", "choices", "allow_other")
SHORT_FIELD = 120
"""One-line fields up to this length render inline (``**Filename:** note.md``)."""
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+(.*)$")
CONTAINED_HEADING = "####"
"""A draft's headings, whatever their level, at this size: they must not dwarf the page."""


def contained(markdown: str) -> str:
    """Markdown shown as a quoted block with its headings made small (#### …)."""
    lines = []
    for line in markdown.splitlines():
        heading = _HEADING.match(line)
        if heading:
            line = f"{CONTAINED_HEADING} {heading.group(1)}"
        lines.append(f"> {line}" if line.strip() else ">")
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class InterruptCall:
    call_id: str
    arguments: str
    """The call's JSON payload exactly as received."""

    @property
    def payload(self) -> dict[str, Any]:
        try:
            value = json.loads(self.arguments)
        except ValueError:
            return {}
        return value if isinstance(value, dict) else {"value": value}

    @property
    def question(self) -> str:
        question = self.payload.get("question")
        return question if isinstance(question, str) and question else "Please review."

    @property
    def choices(self) -> list[str]:
        choices = self.payload.get("choices")
        if isinstance(choices, list) and all(isinstance(c, str) for c in choices) and choices:
            return list(choices)
        return [APPROVE, REJECT]

    @property
    def allow_other(self) -> bool:
        return bool(self.payload.get("allow_other", True))

    def content_markdown(self) -> str:
        """Every field beyond the envelope (a draft note, its title…) as Markdown."""
        parts: list[str] = []
        for key, value in self.payload.items():
            if key in _ENVELOPE_KEYS or value in (None, "", [], {}):
                continue
            label = key.replace("_", " ").capitalize()
            if isinstance(value, str) and "\n" not in value and len(value) <= SHORT_FIELD:
                parts.append(f"**{label}:** {value}")
            elif isinstance(value, str):
                parts.append(f"**{label}**\n\n{contained(value)}")
            else:
                parts.append(f"**{label}**\n\n```json\n{json.dumps(value, indent=2)}\n```")
        return "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class PendingReview:
    response_id: str
    model: str
    calls: tuple[InterruptCall, ...]
    answers: dict[str, str] = field(default_factory=dict)
    """Answers already given to some calls of a batch (a UI asks one call at a time)."""

    def unanswered(self) -> list[InterruptCall]:
        return [c for c in self.calls if c.call_id not in self.answers]

    def answered(self, call_id: str, answer: str) -> PendingReview:
        return PendingReview(
            self.response_id, self.model, self.calls, {**self.answers, call_id: answer}
        )

    @property
    def complete(self) -> bool:
        return not self.unanswered()

    def resume_input(self) -> list[Item]:
        if not self.complete:
            raise ValueError("every pending call needs an answer before resuming")
        return [function_output(c.call_id, self.answers[c.call_id]) for c in self.calls]

    def to_json(self) -> dict[str, Any]:
        return {
            "response_id": self.response_id,
            "model": self.model,
            "calls": [asdict(c) for c in self.calls],
            "answers": dict(self.answers),
        }

    @classmethod
    def from_json(cls, value: Any) -> PendingReview | None:
        if not isinstance(value, Mapping):
            return None
        try:
            calls = tuple(
                InterruptCall(str(c["call_id"]), str(c["arguments"])) for c in value["calls"]
            )
            answers = {str(k): str(v) for k, v in (value.get("answers") or {}).items()}
            return cls(str(value["response_id"]), str(value["model"]), calls, answers)
        except (KeyError, TypeError):
            return None


def pending_review(
    response_id: str, model: str, output: Iterable[Mapping[str, Any]]
) -> PendingReview | None:
    """The review a paused Response asks for, or ``None`` when it did not pause."""
    calls = tuple(
        InterruptCall(str(item["call_id"]), str(item.get("arguments", "")))
        for item in output
        if item.get("type") == "function_call" and item.get("name") == INTERRUPT_TOOL
    )
    return PendingReview(response_id, model, calls) if calls else None


def answer_from_text(text: str, call: InterruptCall) -> str:
    """A typed message while a review is pending: a choice by name, else revision feedback."""
    stripped = text.strip()
    for choice in call.choices:
        if stripped.lower() == choice.lower():
            return choice
    return stripped
