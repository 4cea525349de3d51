"""Opaque identifiers for responses, items and completions."""

from __future__ import annotations

import re
from uuid import uuid4

_RESPONSE_ID = re.compile(r"resp_(?:[0-9a-f]{32}|lg_[0-9a-f]{32}_[0-9a-f]{32})")


def new_id(prefix: str) -> str:
    return f"{prefix}{uuid4().hex}"


def response_id() -> str:
    return new_id("resp_")


def is_response_id(value: str) -> bool:
    """The shape of every Response id LGOS hands out (foreground, background, paused)."""
    return _RESPONSE_ID.fullmatch(value) is not None


def message_id() -> str:
    return new_id("msg_")


def completion_id() -> str:
    return new_id("chatcmpl-")


def function_call_id(call_id: str) -> str:
    """The item id of a function call: stable for its call id, so streams and replays agree."""
    return f"fc_{call_id}"
