"""OpenAI error envelopes for the Files service, and the handlers that emit them.

Routes raise a :class:`FilesError` subclass; FastAPI's own validation and HTTP errors are mapped to
the same ``{"error": {...}}`` shape. Anything unexpected becomes a bare 500 whose details stay in
the logs.
"""

from __future__ import annotations

import logging
import re
from typing import Literal

import psycopg
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from service_kit.envelope import error_response
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

ErrorType = Literal["invalid_request_error", "authentication_error", "server_error"]

logger = logging.getLogger("files_service.errors")


class FilesError(Exception):
    status_code = 400
    type: ErrorType = "invalid_request_error"

    def __init__(self, message: str, *, param: str | None = None, code: str | None = None):
        super().__init__(message)
        self.message = message
        self.param = param
        self.code = code


class InvalidRequestError(FilesError):
    pass


class NotFoundError(FilesError):
    status_code = 404

    def __init__(self, kind: str, object_id: str, param: str = "id") -> None:
        super().__init__(f"No such {kind}: '{object_id}'.", param=param, code="not_found")


class UnprocessableError(FilesError):
    status_code = 422


class TooLargeError(FilesError):
    status_code = 413

    def __init__(self, limit: int) -> None:
        super().__init__(
            f"The file exceeds the maximum upload size of {limit} bytes.",
            param="file",
            code="file_too_large",
        )


class BodyTooLargeError(FilesError):
    status_code = 413

    def __init__(self, limit: int) -> None:
        super().__init__(f"The request body exceeds {limit} bytes.", code="request_too_large")


class AuthenticationError(FilesError):
    status_code = 401
    type = "invalid_request_error"


class UpstreamError(FilesError):
    """A service this one depends on (the embeddings endpoint) failed; details stay in logs."""

    status_code = 502
    type = "server_error"

    def __init__(self, message: str) -> None:
        super().__init__(message, code="upstream_error")


class ServerError(FilesError):
    status_code = 500
    type = "server_error"

    def __init__(self) -> None:
        super().__init__("Internal server error", code="server_error")


class DatabaseUnavailableError(FilesError):
    status_code = 503
    type = "server_error"

    def __init__(self) -> None:
        super().__init__(
            "The file database is unavailable; retry shortly.", code="service_unavailable"
        )


def allowed_methods(request: Request) -> str:
    """Every documented method of the path, not only those of the route Starlette matched
    first (HEAD is implied by GET)."""
    path = request.url.path
    for template, operations in request.app.openapi()["paths"].items():
        if re.fullmatch(re.sub(r"\{[^}]+\}", "[^/]+", template), path):
            return ", ".join(sorted(m.upper() for m in operations))
    return ""


def install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(FilesError)
    async def files_error(request: Request, exc: FilesError) -> Response:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status_code == 401 else None
        return error_response(exc, headers)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        if first.get("type") == "json_invalid":  # its loc is a byte offset, not a field
            return error_response(InvalidRequestError("The request body is not valid JSON."))
        location = [str(p) for p in first.get("loc", ()) if p not in ("body", "path", "query")]
        param = ".".join(location) or None
        message = f"Invalid '{param}': {first.get('msg')}." if param else "Invalid request."
        return error_response(InvalidRequestError(message, param=param))

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if isinstance(exc.__cause__, FilesError):  # FastAPI wraps errors raised reading a body
            return error_response(exc.__cause__)
        if exc.status_code >= 500:
            return error_response(ServerError())
        error = FilesError(str(exc.detail), code="not_found" if exc.status_code == 404 else None)
        error.status_code = exc.status_code
        headers = getattr(exc, "headers", None)
        if exc.status_code == 405:
            headers = {"Allow": allowed_methods(request)}
        return error_response(error, headers)

    @app.exception_handler(psycopg.DataError)
    async def unstorable(request: Request, exc: psycopg.DataError) -> Response:
        # PostgreSQL refused a value the request carried (a NUL character, most often): the
        # statement failed, so nothing changed.
        logger.info("request value refused by PostgreSQL", extra={"path": request.url.path})
        return error_response(
            InvalidRequestError(
                "The request holds a value that cannot be stored, such as a NUL character.",
                code="invalid_value",
            )
        )

    @app.exception_handler(psycopg.OperationalError)
    async def database_down(request: Request, exc: psycopg.OperationalError) -> Response:
        # PostgreSQL unreachable or restarting (a PoolTimeout is one too): retryable, no stack.
        logger.warning("database unavailable", extra={"path": request.url.path, "error": repr(exc)})
        return error_response(DatabaseUnavailableError())

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, exc: ClientDisconnect) -> Response:
        return Response(status_code=499)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        logger.error("unhandled error", exc_info=exc, extra={"path": request.url.path})
        return error_response(ServerError())
