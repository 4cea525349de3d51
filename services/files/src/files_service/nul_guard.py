"""NUL characters in a path or query string never reach PostgreSQL, which cannot hold them.

A path with one names nothing (404); a query parameter with one is a 400 naming it. Bodies are
covered by the PostgreSQL ``DataError`` handler in ``errors.py``.
"""

from __future__ import annotations

from urllib.parse import parse_qsl

from service_kit.envelope import error_response
from starlette.types import ASGIApp, Receive, Scope, Send

from files_service.errors import FilesError, InvalidRequestError


class NulGuard:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            error = _refusal(scope)
            if error is not None:
                await error_response(error)(scope, receive, send)
                return
        await self.app(scope, receive, send)


def _refusal(scope: Scope) -> FilesError | None:
    if "\x00" in scope["path"]:
        error = FilesError("Not Found", code="not_found")
        error.status_code = 404
        return error
    query = scope.get("query_string", b"").decode("latin-1")
    for key, value in parse_qsl(query, keep_blank_values=True, encoding="utf-8"):
        if "\x00" in key or "\x00" in value:
            name = key.replace("\x00", "\\u0000")
            return InvalidRequestError(
                f"Query parameter '{name}' may not contain a NUL character.",
                param=name,
            )
    return None
