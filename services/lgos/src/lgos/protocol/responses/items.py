"""Response objects and output items, as plain JSON-ready dicts."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal

from lgos.errors import INTERNAL_ERROR_MESSAGE
from lgos.protocol.ids import function_call_id, message_id, response_id
from lgos.protocol.responses.decode import DecodedResponsesRequest
from lgos.runtime.events import Citation, FunctionCall, IncompleteReason, ToolActivity, Usage

ResponseStatus = Literal["queued", "in_progress", "completed", "incomplete", "failed", "cancelled"]
Phase = Literal["commentary", "final_answer"]

_INCOMPLETE_REASONS: dict[IncompleteReason, str] = {
    "length": "max_output_tokens",
    "content_filter": "content_filter",
}


@dataclass(slots=True)
class ResponseShell:
    """The fields of one Response that stay fixed from ``response.created`` to the end."""

    model: str
    request: DecodedResponsesRequest
    id: str = field(default_factory=response_id)
    background: bool = False
    created_at: int = field(default_factory=lambda: int(time.time()))

    def build(
        self,
        status: ResponseStatus,
        output: list[dict[str, Any]],
        *,
        usage: Usage | None = None,
        incomplete_reason: IncompleteReason | None = None,
        failed: bool = False,
    ) -> dict[str, Any]:
        response: dict[str, Any] = {
            "id": self.id,
            "object": "response",
            "created_at": self.created_at,
            "status": status,
            "background": self.background,
            "model": self.model,
            "output": output,
            "error": None,
            "incomplete_details": None,
            "instructions": self.request.instructions,
            "metadata": self.request.metadata,
            "parallel_tool_calls": self.request.parallel_tool_calls,
            "previous_response_id": self.request.previous_response_id,
            "store": self.request.store,
            "temperature": None,
            "top_p": None,
            "text": {"format": {"type": "text"}},
            "tool_choice": self.request.tool_choice,
            "tools": self.request.tools,
        }
        if status in ("completed", "incomplete", "failed"):
            response["completed_at"] = int(time.time())
        if incomplete_reason is not None:
            response["incomplete_details"] = {"reason": _INCOMPLETE_REASONS[incomplete_reason]}
        if failed:
            # Streams report every graph failure, context overflow included, as a server_error.
            response["error"] = {"code": "server_error", "message": INTERNAL_ERROR_MESSAGE}
        if usage is not None:
            response["usage"] = usage_object(usage)
        return response


def usage_object(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.input_tokens,
        "input_tokens_details": {"cached_tokens": usage.cached_tokens, "cache_write_tokens": 0},
        "output_tokens": usage.output_tokens,
        "output_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        "total_tokens": usage.total_tokens,
    }


def output_text(text: str, annotations: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {"type": "output_text", "text": text, "annotations": annotations or [], "logprobs": []}


def refusal_part(refusal: str) -> dict[str, Any]:
    return {"type": "refusal", "refusal": refusal}


def message_item(
    content: list[dict[str, Any]],
    *,
    phase: Phase,
    status: Literal["in_progress", "completed", "incomplete"] = "completed",
    item_id: str | None = None,
) -> dict[str, Any]:
    return {
        "id": item_id or message_id(),
        "type": "message",
        "role": "assistant",
        "status": status,
        "phase": phase,
        "content": content,
    }


def url_citation(citation: Citation) -> dict[str, Any]:
    return {
        "type": "url_citation",
        "url": citation.url,
        "title": citation.title,
        "start_index": citation.start_index,
        "end_index": citation.end_index,
    }


def function_call_item(call: FunctionCall, *, status: str | None = None) -> dict[str, Any]:
    return {
        "id": function_call_id(call.call_id),
        "type": "function_call",
        "call_id": call.call_id,
        "name": call.name,
        "arguments": call.arguments,
        "status": status or ("completed" if call.complete else "incomplete"),
    }


def custom_call_item(activity: ToolActivity, *, with_input: bool = True) -> dict[str, Any]:
    return {
        "id": f"ctc_{activity.call_id}",
        "type": "custom_tool_call",
        "call_id": activity.call_id,
        "name": activity.name,
        "input": activity.input if with_input else "",
    }


def custom_output_item(activity: ToolActivity) -> dict[str, Any]:
    return {
        "id": f"ctco_{activity.call_id}",
        "type": "custom_tool_call_output",
        "call_id": activity.call_id,
        "output": activity.output or "",
        "status": "completed",
    }


def web_search_item(activity: ToolActivity, status: str) -> dict[str, Any]:
    return {
        "id": f"ws_{activity.call_id}",
        "type": "web_search_call",
        "status": status,
        "action": {"type": "search", "query": activity.input},
    }


def activity_items(activity: ToolActivity) -> list[dict[str, Any]]:
    """The completed items of one server tool call, as a non-streaming Response lists them."""
    if activity.kind == "web_search":
        return [web_search_item(activity, "completed")]
    return [custom_call_item(activity), custom_output_item(activity)]
