"""``status_event()``: the one public way for a node to report progress."""

from __future__ import annotations

from typing import Any

from langgraph.config import get_stream_writer

STATUS_KEY = "lgos_status"


def status_event(description: str) -> None:
    """Publish a transient progress line from inside a graph node.

    Streaming Responses show it as a completed ``phase="commentary"`` message; Chat Completions
    and non-streaming requests ignore it. Other custom stream data a graph writes stays private.
    """
    get_stream_writer()({STATUS_KEY: {"description": description}})


def read_status(chunk: Any) -> str | None:
    """The description carried by a custom stream chunk, if it is a status event."""
    if isinstance(chunk, dict):
        status = chunk.get(STATUS_KEY)
        if isinstance(status, dict):
            description = status.get("description")
            if isinstance(description, str):
                return description
    return None
