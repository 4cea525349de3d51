"""Chat completion objects and the ``chat.completion.chunk`` SSE encoder."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import orjson

from lgos.errors import INTERNAL_ERROR_MESSAGE, error_envelope
from lgos.protocol.ids import completion_id
from lgos.runtime.events import RunOutcome, TextDelta, Usage
from lgos.runtime.runner import GraphRunner, RunPlan, translate_failure

DONE = b"data: [DONE]\n\n"


def usage_object(usage: Usage) -> dict[str, Any]:
    return {
        "prompt_tokens": usage.input_tokens,
        "completion_tokens": usage.output_tokens,
        "total_tokens": usage.total_tokens,
        "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
        "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
    }


def finish_reason(outcome: RunOutcome) -> str:
    if outcome.incomplete_reason:
        return outcome.incomplete_reason
    return "tool_calls" if outcome.function_calls else "stop"


def chat_annotations(outcome: RunOutcome) -> list[dict[str, Any]]:
    return [
        {
            "type": "url_citation",
            "url_citation": {
                "url": c.url,
                "title": c.title,
                "start_index": c.start_index,
                "end_index": c.end_index,
            },
        }
        for c in outcome.citations
    ]


def tool_calls(outcome: RunOutcome, *, indexed: bool = False) -> list[dict[str, Any]]:
    calls = []
    for index, call in enumerate(outcome.function_calls):
        entry: dict[str, Any] = {
            "id": call.call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        if indexed:
            entry["index"] = index
        calls.append(entry)
    return calls


@dataclass(slots=True)
class CompletionShell:
    model: str
    id: str = field(default_factory=completion_id)
    created: int = field(default_factory=lambda: int(time.time()))

    def completion(self, outcome: RunOutcome) -> dict[str, Any]:
        has_other = outcome.refusal is not None or bool(outcome.function_calls)
        message: dict[str, Any] = {
            "role": "assistant",
            "content": outcome.text if outcome.text or not has_other else None,
            "refusal": outcome.refusal,
        }
        if outcome.citations:
            message["annotations"] = chat_annotations(outcome)
        if outcome.function_calls:
            message["tool_calls"] = tool_calls(outcome)
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason(outcome),
                    "logprobs": None,
                }
            ],
        }
        if outcome.usage is not None:
            body["usage"] = usage_object(outcome.usage)
        return body

    def chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        return self._frame({"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None})

    def _frame(self, choice: dict[str, Any] | None, usage: Usage | None = None) -> bytes:
        body: dict[str, Any] = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [choice] if choice is not None else [],
        }
        if usage is not None:
            body["usage"] = usage_object(usage)
        return b"data: " + orjson.dumps(body) + b"\n\n"

    def usage_chunk(self, usage: Usage | None) -> bytes:
        return self._frame(None, usage) if usage is not None else b""

    def delta_head(self) -> bytes:
        """Everything before the content string in a content-delta chunk."""
        return (
            b'data: {"id":"'
            + self.id.encode()
            + b'","object":"chat.completion.chunk","created":'
            + str(self.created).encode()
            + b',"model":'
            + orjson.dumps(self.model)
            + b',"choices":[{"index":0,"finish_reason":null,"logprobs":null,"delta":{"content":'
        )


_DELTA_TAIL = b"}}]}\n\n"


async def encode_stream(
    runner: GraphRunner, plan: RunPlan, shell: CompletionShell, *, include_usage: bool
) -> AsyncIterator[bytes]:
    head = shell.delta_head()
    first = shell.chunk({"role": "assistant", "content": ""})
    outcome: RunOutcome | None = None
    try:
        async for event in runner.stream(plan):
            if isinstance(event, TextDelta):
                frame = head + orjson.dumps(event.text) + _DELTA_TAIL
                if first:
                    frame, first = first + frame, b""
                yield frame
            elif isinstance(event, RunOutcome):
                outcome = event
            # Status events and other custom stream data never reach Chat clients.
    except asyncio.CancelledError:
        raise
    except Exception as exc:
        translate_failure(exc, model=runner.model)
        envelope = error_envelope(INTERNAL_ERROR_MESSAGE, type="server_error", code="server_error")
        yield first + b"data: " + orjson.dumps(envelope) + b"\n\n"
        return
    assert outcome is not None
    frames = [first]
    if outcome.refusal is not None:
        frames.append(shell.chunk({"refusal": outcome.refusal}))
    if outcome.function_calls:
        frames.append(shell.chunk({"tool_calls": tool_calls(outcome, indexed=True)}))
    final_delta: dict[str, Any] = {}
    if outcome.citations:
        # Extension: the published delta schema has no annotations field.
        final_delta["annotations"] = chat_annotations(outcome)
    frames.append(shell.chunk(final_delta, finish_reason(outcome)))
    if include_usage:
        frames.append(shell.usage_chunk(outcome.usage))
    frames.append(DONE)
    yield b"".join(frames)
