"""Opaque identifiers for responses, items and completions."""

from __future__ import annotations

from uuid import uuid4


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid4().hex}"


def response_id() -> str:
    return new_id("resp_")


def message_id() -> str:
    return new_id("msg_")


def completion_id() -> str:
    return new_id("chatcmpl-")


def function_call_id(call_id: str) -> str:
    """The item id of a function call: stable for its call id, so streams and replays agree."""
    return f"fc_{call_id}"
