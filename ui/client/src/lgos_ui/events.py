"""Responses stream events (as JSON dicts) mapped to what a chat UI shows.

Only ``final_answer`` text (or a message without a phase) enters the transcript; ``commentary``
messages are progress, shown apart (:class:`ProgressNotes`: one block above the Response's
answer). Citations, tool items, refusals and the terminal status are reported as their own UI
events; a failed or incomplete Response keeps the partial text.

The events a turn (:mod:`lgos_ui.turn`) adds are here too (:data:`TurnEvent`): client tool calls,
shown files, notices and errors, reviews, background runs; a UI renders them all in one place.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from lgos_ui.review import PendingReview

Outcome = Literal["completed", "incomplete", "failed", "cancelled", "error"]
TERMINAL = frozenset({"completed", "incomplete", "failed", "cancelled"})
"""A background run's statuses that end polling."""


@dataclass(frozen=True, slots=True)
class AnswerDelta:
    text: str


@dataclass(frozen=True, slots=True)
class RefusalDelta:
    text: str


@dataclass(frozen=True, slots=True)
class Commentary:
    """A finished commentary (progress) message."""

    item_id: str
    text: str


WORKING = "Working…"
"""The label of a Response's commentary while the Response runs."""
WORKED = "How I got there"
"""The label of a Response's commentary once the Response ended."""


@dataclass(slots=True)
class ProgressNotes:
    """One Response's commentary as a chat UI shows it: one block, above that Response's
    answer (a UI shows the block before it shows the answer), open and labelled
    :data:`WORKING` while the Response runs, collapsed and labelled :data:`WORKED` once it
    ended."""

    lines: list[str] = field(default_factory=list)
    done: bool = False

    def add(self, text: str) -> None:
        self.lines.append(text.strip())

    def finish(self) -> bool:
        """Mark the block done; False when there is no block or it was already done."""
        if self.done or not self.lines:
            return False
        self.done = True
        return True

    @property
    def label(self) -> str:
        return WORKED if self.done else WORKING

    @property
    def collapsed(self) -> bool:
        return self.done

    def markdown(self) -> str:
        return "\n".join(f"- {line}" for line in self.lines)


@dataclass(frozen=True, slots=True)
class Citation:
    url: str
    title: str


@dataclass(frozen=True, slots=True)
class ToolActivity:
    """A finished tool item: ``custom_tool_call``, its output, ``web_search_call``, or a
    ``function_call`` the client must answer."""

    kind: str
    name: str
    item: dict[str, Any]

    @property
    def summary(self) -> str:
        item = self.item
        if self.kind == "web_search_call":
            action = item.get("action") or {}
            query = action.get("query") if isinstance(action, Mapping) else None
            return f"searched the web for {query!r}" if query else "searched the web"
        if self.kind == "custom_tool_call":
            return f"input: {item.get('input', '')}"
        if self.kind == "custom_tool_call_output":
            return f"output: {item.get('output', '')}"
        if self.kind == "function_call":
            return f"arguments: {item.get('arguments', '')}"
        return self.kind


@dataclass(frozen=True, slots=True)
class Finished:
    outcome: Outcome
    response: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    """Why it did not complete (incomplete reason, error message), for the person."""

    @property
    def response_id(self) -> str | None:
        value = self.response.get("id")
        return value if isinstance(value, str) else None

    @property
    def output(self) -> list[dict[str, Any]]:
        output = self.response.get("output")
        return (
            [dict(i) for i in output if isinstance(i, Mapping)] if isinstance(output, list) else []
        )


@dataclass(frozen=True, slots=True)
class TurnError:
    """A request failed or the turn stopped; what was shown so far stays."""

    text: str


UIEvent = AnswerDelta | RefusalDelta | Commentary | Citation | ToolActivity | Finished
"""What a stream maps to."""

# What a turn (lgos_ui.turn) yields beyond the stream's own events.


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A client (MCP) tool call starts."""

    call_id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class ToolDone:
    """A client (MCP) tool call ended: ``failed`` when it could not run (``text`` says why),
    ``is_error`` when it ran and the tool reported an error."""

    call: ToolCall
    text: str
    is_error: bool = False
    failed: bool = False


@dataclass(frozen=True, slots=True)
class Notice:
    """Something the person should know; the turn goes on. A ``warning`` (a file that could not
    be shown) belongs with the answer, other notices with the progress."""

    text: str
    warning: bool = False


@dataclass(frozen=True, slots=True)
class FileShown:
    """A ``display_file`` call's file, downloaded through the gateway, for the person."""

    file_id: str
    name: str
    mime: str
    content: bytes


@dataclass(frozen=True, slots=True)
class BackgroundRun:
    """A background run, stored before it is polled (a reload polls it again)."""

    response_id: str
    key: str
    """The ``Idempotency-Key`` the run was created with."""
    model: str

    def to_json(self) -> dict[str, str]:
        return {"response_id": self.response_id, "key": self.key, "model": self.model}


@dataclass(frozen=True, slots=True)
class BackgroundProgress:
    """One poll of a background run: every commentary line so far and the ones new to it."""

    response_id: str
    status: str
    elapsed: int
    notes: tuple[str, ...]
    new: tuple[str, ...]

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL


@dataclass(frozen=True, slots=True)
class BackgroundFinished:
    """The run ended; its output (when kept) is already stored."""

    result: Finished


TurnEvent = (
    UIEvent
    | ToolCall
    | ToolDone
    | FileShown
    | PendingReview
    | Notice
    | TurnError
    | BackgroundRun
    | BackgroundProgress
    | BackgroundFinished
)

TOOL_KINDS = ("custom_tool_call", "custom_tool_call_output", "web_search_call", "function_call")


class StreamMapper:
    """Feed it every stream event in order; it remembers each message item's phase."""

    def __init__(self) -> None:
        self.phases: dict[str, str | None] = {}
        self.commentary: dict[str, str] = {}
        self.answer = ""
        self.refusal = ""
        self.citations: list[Citation] = []

    def _is_commentary(self, item_id: Any) -> bool:
        return isinstance(item_id, str) and self.phases.get(item_id) == "commentary"

    def feed(self, event: Mapping[str, Any]) -> list[UIEvent]:
        kind = event.get("type")
        if kind == "response.output_item.added":
            item = event.get("item") or {}
            if item.get("type") == "message" and isinstance(item.get("id"), str):
                self.phases[item["id"]] = item.get("phase")
            return []
        if kind == "response.output_text.delta":
            delta = str(event.get("delta", ""))
            if self._is_commentary(event.get("item_id")):
                item_id = str(event["item_id"])
                self.commentary[item_id] = self.commentary.get(item_id, "") + delta
                return []
            self.answer += delta
            return [AnswerDelta(delta)] if delta else []
        if kind == "response.refusal.delta":
            delta = str(event.get("delta", ""))
            self.refusal += delta
            return [RefusalDelta(delta)] if delta else []
        if kind == "response.output_text.annotation.added":
            citation = citation_of(event.get("annotation"))
            if citation is None or citation in self.citations:
                return []
            self.citations.append(citation)
            return [citation]
        if kind == "response.output_item.done":
            return self._item_done(event.get("item") or {})
        if kind in ("response.completed", "response.incomplete", "response.failed"):
            return [finished(event.get("response") or {})]
        if kind == "error":
            return [Finished("error", {}, str(event.get("message") or "The stream failed."))]
        return []

    def _item_done(self, item: Mapping[str, Any]) -> list[UIEvent]:
        kind = item.get("type")
        if kind == "message" and item.get("phase") == "commentary":
            text = message_text(item) or self.commentary.get(str(item.get("id")), "")
            return [Commentary(str(item.get("id", "")), text)] if text else []
        if kind == "message" and not self.answer and not self.refusal:
            # A message that arrived whole (no deltas): show it once.
            events: list[UIEvent] = []
            text = message_text(item)
            if text:
                self.answer = text
                events.append(AnswerDelta(text))
            refusal = message_refusal(item)
            if refusal:
                self.refusal = refusal
                events.append(RefusalDelta(refusal))
            return events
        if kind in TOOL_KINDS:
            name = item.get("name") or ("web_search" if kind == "web_search_call" else kind)
            return [ToolActivity(str(kind), str(name), dict(item))]
        return []


def citation_of(annotation: Any) -> Citation | None:
    if not isinstance(annotation, Mapping) or annotation.get("type") != "url_citation":
        return None
    url = annotation.get("url")
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        return None
    title = annotation.get("title")
    return Citation(url, title if isinstance(title, str) and title else url)


def _parts(item: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    content = item.get("content")
    return [p for p in content if isinstance(p, Mapping)] if isinstance(content, list) else []


def message_text(item: Mapping[str, Any]) -> str:
    return "".join(str(p.get("text", "")) for p in _parts(item) if p.get("type") == "output_text")


def message_refusal(item: Mapping[str, Any]) -> str:
    return "".join(str(p.get("refusal", "")) for p in _parts(item) if p.get("type") == "refusal")


def citations_of(output: Iterable[Mapping[str, Any]]) -> list[Citation]:
    found: list[Citation] = []
    for item in output:
        if item.get("type") != "message" or item.get("phase") == "commentary":
            continue
        for part in _parts(item):
            for annotation in part.get("annotations") or []:
                citation = citation_of(annotation)
                if citation is not None and citation not in found:
                    found.append(citation)
    return found


def answer_text(output: Iterable[Mapping[str, Any]]) -> str:
    """The transcript text of an output: final-answer messages only."""
    return "".join(
        message_text(item)
        for item in output
        if item.get("type") == "message" and item.get("phase") != "commentary"
    )


def commentary_texts(output: Iterable[Mapping[str, Any]]) -> list[str]:
    return [
        message_text(item)
        for item in output
        if item.get("type") == "message" and item.get("phase") == "commentary"
    ]


def finished(response: Mapping[str, Any]) -> Finished:
    """The terminal state of a Response (a stream's last event, or a polled snapshot)."""
    status = response.get("status")
    body = dict(response)
    if status == "incomplete":
        details = response.get("incomplete_details") or {}
        reason = details.get("reason") if isinstance(details, Mapping) else None
        return Finished("incomplete", body, f"The answer is incomplete ({reason or 'stopped'}).")
    if status == "failed":
        error = response.get("error") or {}
        message = error.get("message") if isinstance(error, Mapping) else None
        return Finished("failed", body, f"The graph failed: {message or 'unknown error'}")
    if status == "cancelled":
        return Finished("cancelled", body, "The run was cancelled.")
    return Finished("completed", body)
