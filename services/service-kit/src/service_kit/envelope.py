"""The OpenAI error envelope, ``{"error": {"message", "type", "param", "code"}}``, built here only.

Each service keeps its own exception classes; anything with the :class:`OpenAIError` attributes
is answered in the envelope by :func:`error_response`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol, runtime_checkable

from starlette.requests import Request
from starlette.responses import Response

from service_kit.responses import JSONResponse

Envelope = dict[str, Any]


@runtime_checkable
class OpenAIError(Protocol):
    """What an error needs to be answered in the envelope."""

    @property
    def status_code(self) -> int: ...

    @property
    def type(self) -> str: ...

    @property
    def message(self) -> str: ...

    @property
    def param(self) -> str | None: ...

    @property
    def code(self) -> str | None: ...


def envelope(
    message: str, type: str, param: str | None = None, code: str | None = None
) -> Envelope:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def error_response(error: OpenAIError, headers: Mapping[str, str] | None = None) -> Response:
    body = envelope(error.message, error.type, error.param, error.code)
    return JSONResponse(body, status_code=error.status_code, headers=headers)


async def envelope_handler(request: Request, exc: Exception) -> Response:
    """The exception handler for a service's own error class, whose instances carry the
    :class:`OpenAIError` attributes: ``app.add_exception_handler(MyError, envelope_handler)``."""
    if not isinstance(exc, OpenAIError):
        raise TypeError(f"{type(exc).__name__} lacks the OpenAI error attributes") from exc
    return error_response(exc)
