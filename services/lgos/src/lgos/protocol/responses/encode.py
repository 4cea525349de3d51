"""The Responses SSE encoder: neutral run events in, typed ``response.*`` events out.

Lifecycle: ``response.created``, ``response.in_progress``; one completed ``commentary`` message
per status; the ``final_answer`` message opened on its first delta; then exactly one terminal
event: ``response.completed``, ``response.incomplete`` or ``response.failed`` (which keeps the
partial answer and marks the unfinished message incomplete).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Literal

import orjson

from lgos.protocol.ids import message_id
from lgos.protocol.responses.items import (
    ResponseShell,
    activity_items,
    custom_call_item,
    custom_output_item,
    function_call_item,
    message_item,
    output_text,
    refusal_part,
    url_citation,
    web_search_item,
)
from lgos.runtime.events import (
    Citation,
    FunctionCall,
    RunOutcome,
    StatusUpdate,
    TextDelta,
    ToolActivity,
    ToolEvent,
)
from lgos.runtime.runner import GraphRunner, RunPlan, translate_failure

ItemStatus = Literal["in_progress", "completed", "incomplete"]


class _Encoder:
    """Frames events with increasing ``sequence_number`` and tracks the output list."""

    def __init__(self, shell: ResponseShell) -> None:
        self.shell = shell
        self.sequence = 0
        self.output: list[dict[str, Any]] = []
        self.answer_index = -1
        self.answer_id = ""
        self.answer_text: list[str] = []
        self._delta_head = b""
        self.text_open = False
        self.searches: dict[str, int] = {}

    def frame(self, event: dict[str, Any]) -> bytes:
        event["sequence_number"] = self.sequence
        self.sequence += 1
        kind: str = event["type"]
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"

    def delta(self, text: str) -> bytes:
        # The hot path: one small event per token, its fixed prefix serialized once.
        sequence = self.sequence
        self.sequence += 1
        tail = orjson.dumps(text) + b',"sequence_number":' + str(sequence).encode() + b"}\n\n"
        return self._delta_head + tail

    def response_event(self, kind: str, response: dict[str, Any]) -> bytes:
        return self.frame({"type": kind, "response": response})

    def open_message(self, item: dict[str, Any]) -> list[bytes]:
        index = len(self.output)
        self.output.append(item)
        added = {**item, "status": "in_progress", "content": []}
        return [
            self.frame({"type": "response.output_item.added", "output_index": index, "item": added})
        ]

    def text_part(self, index: int, item_id: str, part_index: int, text: str) -> list[bytes]:
        """A whole output_text part: added, one delta (when non-empty), done."""
        base = {"item_id": item_id, "output_index": index, "content_index": part_index}
        frames = [
            self.frame({"type": "response.content_part.added", **base, "part": output_text("")})
        ]
        if text:
            frames.append(
                self.frame(
                    {"type": "response.output_text.delta", **base, "delta": text, "logprobs": []}
                )
            )
        frames.append(
            self.frame({"type": "response.output_text.done", **base, "text": text, "logprobs": []})
        )
        frames.append(
            self.frame({"type": "response.content_part.done", **base, "part": output_text(text)})
        )
        return frames

    def refusal(self, index: int, item_id: str, part_index: int, refusal: str) -> list[bytes]:
        base = {"item_id": item_id, "output_index": index, "content_index": part_index}
        return [
            self.frame({"type": "response.content_part.added", **base, "part": refusal_part("")}),
            self.frame({"type": "response.refusal.delta", **base, "delta": refusal}),
            self.frame({"type": "response.refusal.done", **base, "refusal": refusal}),
            self.frame(
                {"type": "response.content_part.done", **base, "part": refusal_part(refusal)}
            ),
        ]

    def status(self, description: str) -> bytes:
        item = message_item([output_text(description)], phase="commentary")
        frames = self.open_message(item)
        index = len(self.output) - 1
        frames += self.text_part(index, item["id"], 0, description)
        frames.append(
            self.frame({"type": "response.output_item.done", "output_index": index, "item": item})
        )
        return b"".join(frames)

    def open_answer(self, *, with_text: bool = True) -> list[bytes]:
        self.answer_id = message_id()
        item = message_item([], phase="final_answer", status="in_progress", item_id=self.answer_id)
        frames = self.open_message(item)
        self.answer_index = len(self.output) - 1
        self.text_open = with_text
        if not with_text:
            return frames
        base = {"item_id": self.answer_id, "output_index": self.answer_index, "content_index": 0}
        frames.append(
            self.frame({"type": "response.content_part.added", **base, "part": output_text("")})
        )
        self._delta_head = (
            b'event: response.output_text.delta\ndata: {"type":"response.output_text.delta",'
            b'"item_id":"'
            + self.answer_id.encode()
            + b'","output_index":'
            + str(self.answer_index).encode()
            + b',"content_index":0,"logprobs":[],"delta":'
        )
        return frames

    def close_answer(
        self,
        status: ItemStatus,
        refusal: str | None,
        citations: list[Citation] = (),  # type: ignore[assignment]
    ) -> list[bytes]:
        """Finish the answer's text part (citations first), add a refusal part, close the item."""
        frames: list[bytes] = []
        content: list[dict[str, Any]] = []
        if self.text_open:
            text = "".join(self.answer_text)
            base = {
                "item_id": self.answer_id,
                "output_index": self.answer_index,
                "content_index": 0,
            }
            annotations = [url_citation(c) for c in citations]
            for index, annotation in enumerate(annotations):
                frames.append(
                    self.frame(
                        {
                            "type": "response.output_text.annotation.added",
                            **base,
                            "annotation_index": index,
                            "annotation": annotation,
                        }
                    )
                )
            frames.append(
                self.frame(
                    {"type": "response.output_text.done", **base, "text": text, "logprobs": []}
                )
            )
            part = output_text(text, annotations)
            frames.append(self.frame({"type": "response.content_part.done", **base, "part": part}))
            content.append(part)
        if refusal is not None:
            frames += self.refusal(self.answer_index, self.answer_id, len(content), refusal)
            content.append(refusal_part(refusal))
        item = message_item(content, phase="final_answer", status=status, item_id=self.answer_id)
        self.output[self.answer_index] = item
        frames.append(
            self.frame(
                {
                    "type": "response.output_item.done",
                    "output_index": self.answer_index,
                    "item": item,
                }
            )
        )
        return frames

    def tool_called(self, activity: ToolActivity) -> bytes:
        index = len(self.output)
        if activity.kind == "web_search":
            item = web_search_item(activity, "in_progress")
            self.output.append(item)
            self.searches[activity.call_id] = index
            base = {"item_id": item["id"], "output_index": index}
            return b"".join(
                [
                    self.frame(
                        {"type": "response.output_item.added", "output_index": index, "item": item}
                    ),
                    self.frame({"type": "response.web_search_call.in_progress", **base}),
                    self.frame({"type": "response.web_search_call.searching", **base}),
                ]
            )
        item = custom_call_item(activity)
        self.output.append(item)
        added = custom_call_item(activity, with_input=False)
        base = {"item_id": item["id"], "output_index": index}
        return b"".join(
            [
                self.frame(
                    {"type": "response.output_item.added", "output_index": index, "item": added}
                ),
                self.frame(
                    {
                        "type": "response.custom_tool_call_input.delta",
                        **base,
                        "delta": activity.input,
                    }
                ),
                self.frame(
                    {
                        "type": "response.custom_tool_call_input.done",
                        **base,
                        "input": activity.input,
                    }
                ),
                self.frame(
                    {"type": "response.output_item.done", "output_index": index, "item": item}
                ),
            ]
        )

    def tool_returned(self, activity: ToolActivity) -> bytes:
        if activity.kind == "web_search":
            index = self.searches.pop(activity.call_id)
            item = web_search_item(activity, "completed")
            self.output[index] = item
            base = {"item_id": item["id"], "output_index": index}
            return self.frame({"type": "response.web_search_call.completed", **base}) + self.frame(
                {"type": "response.output_item.done", "output_index": index, "item": item}
            )
        index = len(self.output)
        item = custom_output_item(activity)
        self.output.append(item)
        return self.frame(
            {"type": "response.output_item.added", "output_index": index, "item": item}
        ) + self.frame({"type": "response.output_item.done", "output_index": index, "item": item})

    def unfinished_searches(self) -> None:
        """On failure, searches that never returned stay in the output as incomplete."""
        for index in self.searches.values():
            self.output[index] = {**self.output[index], "status": "incomplete"}

    def output_so_far(self) -> list[dict[str, Any]]:
        """A copy of the output, the open answer carrying the text streamed so far."""
        output = [dict(item) for item in self.output]
        if self.answer_index >= 0 and output[self.answer_index]["status"] == "in_progress":
            text = "".join(self.answer_text)
            output[self.answer_index]["content"] = [output_text(text)] if self.text_open else []
        return output

    def function_call(self, call: FunctionCall) -> list[bytes]:
        """A client function call: added, its arguments in one delta, done."""
        item = function_call_item(call)
        index = len(self.output)
        self.output.append(item)
        base = {"item_id": item["id"], "output_index": index}
        added = {**item, "arguments": "", "status": "in_progress"}
        return [
            self.frame(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            ),
            self.frame(
                {"type": "response.function_call_arguments.delta", **base, "delta": call.arguments}
            ),
            self.frame(
                {
                    "type": "response.function_call_arguments.done",
                    **base,
                    "arguments": call.arguments,
                }
            ),
            self.frame({"type": "response.output_item.done", "output_index": index, "item": item}),
        ]


ProgressCallback = Callable[[list[dict[str, Any]]], None]
"""Receives the output so far (the open answer with its text so far) after each event."""

TerminalCallback = Callable[[dict[str, Any]], None]
"""Receives the Response object of the terminal event, just before that event is yielded."""


async def encode_stream(
    runner: GraphRunner,
    plan: RunPlan,
    shell: ResponseShell,
    progress: ProgressCallback | None = None,
    before_terminal: Callable[[], Awaitable[None]] | None = None,
    on_terminal: TerminalCallback | None = None,
) -> AsyncIterator[bytes]:
    """The Responses event stream of ``plan``; ``before_terminal`` runs (once) just before the
    terminal event is yielded, so what it releases is free when a client reads that event."""
    encoder = _Encoder(shell)
    yield encoder.response_event("response.created", shell.build("in_progress", [])) + (
        encoder.response_event("response.in_progress", shell.build("in_progress", []))
    )
    outcome: RunOutcome | None = None
    try:
        async for event in runner.stream(plan):
            if isinstance(event, TextDelta):
                if encoder.answer_index < 0:
                    head = b"".join(encoder.open_answer())
                    encoder.answer_text.append(event.text)
                    yield head + encoder.delta(event.text)
                else:
                    encoder.answer_text.append(event.text)
                    yield encoder.delta(event.text)
            elif isinstance(event, StatusUpdate):
                yield encoder.status(event.description)
            elif isinstance(event, ToolEvent) and event.returned:
                yield encoder.tool_returned(event.activity)
            elif isinstance(event, ToolEvent):
                yield encoder.tool_called(event.activity)
            else:
                outcome = event
            if progress is not None:
                progress(encoder.output_so_far())
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        translate_failure(exc, model=runner.model)
        failure: list[bytes] = []
        encoder.unfinished_searches()
        if encoder.answer_index >= 0:
            failure += encoder.close_answer("incomplete", None)
        failed = shell.build("failed", encoder.output, failed=True)
        failure.append(encoder.response_event("response.failed", failed))
        if on_terminal is not None:
            on_terminal(failed)
        if before_terminal is not None:
            await before_terminal()
        yield b"".join(failure)
        return
    assert outcome is not None
    frames: list[bytes] = []
    status: ItemStatus = "incomplete" if outcome.incomplete_reason else "completed"
    if encoder.answer_index < 0 and needs_message(outcome):
        frames = encoder.open_answer(with_text=outcome.refusal is None)
    if encoder.answer_index >= 0:
        frames += encoder.close_answer(status, outcome.refusal, outcome.citations)
    for call in outcome.function_calls:
        frames += encoder.function_call(call)
    kind = "response.incomplete" if outcome.incomplete_reason else "response.completed"
    response = shell.build(
        "incomplete" if outcome.incomplete_reason else "completed",
        encoder.output,
        usage=outcome.usage,
        incomplete_reason=outcome.incomplete_reason,
    )
    frames.append(encoder.response_event(kind, response))
    if on_terminal is not None:
        on_terminal(response)
    if before_terminal is not None:
        await before_terminal()
    yield b"".join(frames)


def needs_message(outcome: RunOutcome) -> bool:
    """A final-answer message unless the answer is nothing but client function calls."""
    return bool(outcome.text or outcome.refusal is not None or not outcome.function_calls)


def build_response(shell: ResponseShell, outcome: RunOutcome) -> dict[str, Any]:
    """The non-streaming Response: the final answer only (commentary is streaming-only)."""
    incomplete = outcome.incomplete_reason is not None
    output: list[dict[str, Any]] = []
    for activity in outcome.tool_activity:
        output.extend(activity_items(activity))
    if needs_message(outcome):
        content = []
        if outcome.text or outcome.refusal is None:
            content.append(output_text(outcome.text, [url_citation(c) for c in outcome.citations]))
        if outcome.refusal is not None:
            content.append(refusal_part(outcome.refusal))
        output.append(
            message_item(
                content, phase="final_answer", status="incomplete" if incomplete else "completed"
            )
        )
    output.extend(function_call_item(call) for call in outcome.function_calls)
    return shell.build(
        "incomplete" if incomplete else "completed",
        output,
        usage=outcome.usage,
        incomplete_reason=outcome.incomplete_reason,
    )
