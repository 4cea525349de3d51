"""OpenAI error envelopes: one exception per HTTP status, one encoder.

Code that rejects a request raises one of these with the parameter it is about; the handlers
registered by the app factory turn them (and FastAPI's own validation and HTTP errors) into the
standard ``{"error": {...}}`` body. Anything else becomes a generic 500 whose details stay in logs.
"""

from __future__ import annotations

from typing import Any, Literal

import orjson
from service_kit.envelope import envelope

ErrorType = Literal["invalid_request_error", "server_error"]
"""The OpenAI ``error.type`` values LGOS emits: every 4xx is an ``invalid_request_error``."""

INTERNAL_ERROR_MESSAGE = "Internal server error"


class LGOSError(Exception):
    """Base class of every error LGOS reports in the OpenAI envelope.

    Each subclass stands for one HTTP status; ``status_code`` stays a keyword for callers that
    raised ``InvalidRequestError(status_code=...)`` before the subclasses existed.
    """

    status_code: int = 500
    type: ErrorType = "server_error"

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # The envelope type follows the status: a subclass declares only its status.
        cls.type = "invalid_request_error" if cls.status_code < 500 else "server_error"

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
    """The request cannot be served as sent (HTTP 400).

    Graph adapters such as ``context_factory`` may raise it too, with their own param and code.
    """

    status_code = 400


class AuthenticationError(LGOSError):
    """No API key, or one LGOS does not know (HTTP 401; only when ``LGOS_API_KEYS`` is set)."""

    status_code = 401


class RequestTooLargeError(LGOSError):
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


class NotFoundError(LGOSError):
    """A resource such as a Response id is unknown (or not visible to the caller): HTTP 404."""

    status_code = 404


class ModelNotFoundError(NotFoundError):
    """The requested model is not a registered graph (HTTP 404 on every route)."""

    def __init__(self, model: str) -> None:
        super().__init__(
            f"The model '{model}' does not exist.", param="model", code="model_not_found"
        )
        self.model = model


class ConflictError(LGOSError):
    """A validly shaped request that the durable state cannot accept now (HTTP 409)."""

    status_code = 409


class RunConflictError(ConflictError):
    """An interrupt run that is busy (``run_busy``) or not paused the way the request assumes
    (``interrupt_state_conflict``). The protocol layer names the request field it is about."""


class LeaseLostError(RuntimeError):
    """An interrupt run's lease expired or was taken over: its holder must not write.

    Raised inside a graph run by the run's checkpoint saver; the runtime reports it to the
    client as a ``run_busy`` ``RunConflictError``.
    """


class UnprocessableEntityError(LGOSError):
    """A well-formed request that contradicts an earlier one, e.g. a reused key (HTTP 422)."""

    status_code = 422


class InternalServerError(LGOSError):
    """An unexpected failure (HTTP 500); its message never carries details."""

    def __init__(self) -> None:
        super().__init__(INTERNAL_ERROR_MESSAGE, code="server_error")


class ServiceUnavailableError(LGOSError):
    """PostgreSQL or Redis, which this request needs, is unreachable right now (HTTP 503)."""

    status_code = 503

    def __init__(self) -> None:
        super().__init__(
            "A storage service this server depends on is unavailable; retry shortly.",
            code="service_unavailable",
        )


def error_envelope(
    message: str,
    *,
    type: ErrorType = "invalid_request_error",
    param: str | None = None,
    code: str | None = None,
) -> dict[str, Any]:
    return envelope(message, type, param, code)


def encode_envelope(error: LGOSError) -> bytes:
    return orjson.dumps(error.to_envelope())
