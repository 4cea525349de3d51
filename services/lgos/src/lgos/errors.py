"""OpenAI error envelopes: one exception per OpenAI error kind, one encoder.

Code that rejects a request raises one of these with the parameter it is about; the handlers
registered by the app factory turn them (and FastAPI's own validation and HTTP errors) into the
standard ``{"error": {...}}`` body. Anything else becomes a generic 500 whose details stay in logs.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson

ErrorType = Literal["invalid_request_error", "not_found_error", "server_error"]
"""The OpenAI ``error.type`` values LGOS emits."""

INTERNAL_ERROR_MESSAGE = "Internal server error"


class LGOSError(Exception):
    """Base class of every error LGOS reports in the OpenAI envelope."""

    status_code: int = 500
    type: ErrorType = "server_error"

    def __init__(
        self,
        message: str,
        *,
        param: str | None = None,
        code: str | None = None,
        status_code: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code
        if status_code is not None:
            self.status_code = status_code

    def to_envelope(self) -> dict[str, Any]:
        return error_envelope(self.message, type=self.type, param=self.param, code=self.code)


class InvalidRequestError(LGOSError):
    """The request cannot be served as sent (HTTP 400 unless told otherwise).

    Graph adapters such as ``context_factory`` may raise it too, with their own param and code.
    """

    status_code = 400
    type = "invalid_request_error"


class AuthenticationError(InvalidRequestError):
    """No API key, or one LGOS does not know (HTTP 401; only when ``LGOS_API_KEYS`` is set)."""

    status_code = 401


class ModelNotFoundError(InvalidRequestError):
    """The requested model is not a registered graph (HTTP 404 on every route)."""

    status_code = 404

    def __init__(self, model: str) -> None:
        super().__init__(
            f"The model '{model}' does not exist.", param="model", code="model_not_found"
        )
        self.model = model


class NotFoundError(LGOSError):
    """A resource such as a Response id is unknown (or not visible to the caller)."""

    status_code = 404
    type = "invalid_request_error"


class RequestTooLargeError(InvalidRequestError):
    """The request body exceeds ``LGOS_MAX_REQUEST_BYTES`` (HTTP 413)."""

    status_code = 413

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"The request body exceeds the limit of {limit} bytes.", code="request_too_large"
        )
        self.limit = limit


class ContextLengthExceededError(InvalidRequestError):
    """A model call inside the graph exceeded its context window (HTTP 400, not retried)."""

    def __init__(self) -> None:
        super().__init__(
            "The input exceeds the context window of a model used by this graph.",
            code="context_length_exceeded",
        )


class ServerError(LGOSError):
    """An unexpected failure; its message never carries details."""

    def __init__(self) -> None:
        super().__init__(INTERNAL_ERROR_MESSAGE, code="server_error")


def error_envelope(
    message: str,
    *,
    type: ErrorType = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return {"error": {"message": message, "type": type, "param": param, "code": code}}


def encode_envelope(error: LGOSError) -> bytes:
    return orjson.dumps(error.to_envelope())
