"""offline-model's errors: every failure is a :class:`RequestError`, answered in the envelope."""

from __future__ import annotations

import logging
from collections.abc import Callable, Coroutine
from typing import Any

from fastapi import Request
from fastapi.exceptions import RequestValidationError
from service_kit.envelope import envelope_handler, error_response
from starlette.exceptions import HTTPException
from starlette.responses import Response

logger = logging.getLogger("offline_model.errors")


class RequestError(Exception):
    """A request offline-model cannot serve; the app answers it in the OpenAI envelope."""

    def __init__(
        self,
        message: str,
        param: str | None = None,
        *,
        status_code: int = 400,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.param, self.status_code, self.code = message, param, status_code, code

    @property
    def type(self) -> str:
        return "server_error" if self.status_code >= 500 else "invalid_request_error"


def too_large(limit: int) -> RequestError:
    return RequestError(
        f"The request body exceeds the limit of {limit} bytes.",
        status_code=413,
        code="request_too_large",
    )


async def invalid_request(request: Request, exc: RequestValidationError) -> Response:
    return error_response(RequestError("Invalid request."))


async def http_error(request: Request, exc: HTTPException) -> Response:
    message = "Internal server error" if exc.status_code >= 500 else str(exc.detail)
    return error_response(RequestError(message, status_code=exc.status_code))


async def unexpected(request: Request, exc: Exception) -> Response:
    logger.error("unhandled error", exc_info=exc)
    return error_response(RequestError("Internal server error", status_code=500))


Handler = Callable[[Request, Any], Coroutine[Any, Any, Response]]

EXCEPTION_HANDLERS: dict[int | type[Exception], Handler] = {
    RequestError: envelope_handler,
    RequestValidationError: invalid_request,
    HTTPException: http_error,
    Exception: unexpected,
}
"""The app's handlers, by the exception class each answers."""
