"""Request-scoped log context: the fields every log line of one request carries.

A request's context lives in a :class:`contextvars.ContextVar`, so tasks the request starts
(graph nodes, streams) inherit it and concurrent requests never see each other's fields.
:class:`service_kit.logs.JSONFormatter` writes the bound fields into each line; the fields are
identifiers and outcomes only (:data:`FIELDS`), never message bodies, file contents or secrets.

``X-Request-Id``: a caller's id is kept when it is 1 to 128 characters of
``A-Z a-z 0-9 . _ : + / = -``; anything else (empty, longer, spaces, control characters,
non-ASCII) is replaced by a generated id rather than refused, so a diagnostic header never
fails a request. The id in force is returned on every response.

Standard library only at import (OpenTelemetry is imported by the one function that injects
trace context), so the UIs' backends bind request ids with it from their own venvs.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

REQUEST_ID_HEADER = "X-Request-Id"
TRACEPARENT_HEADER = "traceparent"
MAX_REQUEST_ID = 128
#: What a log line may carry from the context, in this order.
FIELDS = (
    "request_id",
    "trace_id",
    "response_id",
    "run_id",
    "model",
    "scope_hash",
    "status",
    "duration_ms",
)

_REQUEST_ID = re.compile(rf"[A-Za-z0-9._:+/=-]{{1,{MAX_REQUEST_ID}}}")
# W3C Trace Context, version 00: version-traceid-parentid-flags, all lowercase hex.
_TRACEPARENT = re.compile(r"([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})")
_EMPTY: Mapping[str, Any] = {}
_context: ContextVar[Mapping[str, Any]] = ContextVar("service_kit_log_context", default=_EMPTY)


def new_request_id() -> str:
    return f"req_{uuid.uuid4().hex}"


def accepted_request_id(value: str | None) -> str | None:
    """The caller's ``X-Request-Id`` when it is a valid id, else ``None``."""
    if value is None or _REQUEST_ID.fullmatch(value) is None:
        return None
    return value


def trace_id_of(traceparent: str | None) -> str | None:
    """The trace id of a valid W3C ``traceparent`` (all-zero ids and version ff are invalid)."""
    if traceparent is None:
        return None
    match = _TRACEPARENT.fullmatch(traceparent.strip())
    if match is None or match[1] == "ff" or set(match[2]) == {"0"} or set(match[3]) == {"0"}:
        return None
    return match[2]


def current() -> Mapping[str, Any]:
    """The fields bound in this context (read-only)."""
    return _context.get()


def bind(**fields: Any) -> None:
    """Add ``fields`` to this context (``None`` values are left out) for the rest of it."""
    given = {k: v for k, v in fields.items() if v is not None}
    if given:
        _context.set({**_context.get(), **given})


@contextmanager
def bound(**fields: Any) -> Iterator[None]:
    """``fields`` bound inside the block only."""
    token = _context.set({**_context.get(), **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _context.reset(token)


@contextmanager
def fresh(**fields: Any) -> Iterator[None]:
    """A new context holding only ``fields`` inside the block (one request, one job)."""
    token = _context.set({k: v for k, v in fields.items() if v is not None})
    try:
        yield
    finally:
        _context.reset(token)


def request_id() -> str | None:
    value = _context.get().get("request_id")
    return value if isinstance(value, str) else None


def outgoing_headers() -> dict[str, str]:
    """What a call to another service made for this request carries: its ``X-Request-Id``
    and the W3C trace context of the current span (with tracing off, the caller's
    ``traceparent`` as it came)."""
    from opentelemetry import propagate

    headers: dict[str, str] = {}
    rid = request_id()
    if rid is not None:
        headers[REQUEST_ID_HEADER] = rid
    propagate.inject(headers)
    return headers


async def inject_httpx(request: Any) -> None:
    """An httpx ``request`` event hook adding :func:`outgoing_headers` to each call (headers
    the call set itself win)."""
    for name, value in outgoing_headers().items():
        if name not in request.headers:
            request.headers[name] = value
