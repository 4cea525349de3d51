"""Request bodies bounded while they are read, so a huge body is never held in memory.

A declared ``Content-Length`` over the limit is answered at once, before a byte is read; a body
without one (chunked) is counted as it arrives and the read fails once it passes the limit, which
the app's own handlers then answer. Each service passes its own error, so the 413 keeps its
message and code.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from service_kit.envelope import OpenAIError, error_response


@dataclass(frozen=True, slots=True)
class Limit:
    """At most ``max_bytes`` of body; past it, ``too_large()`` is the error to answer."""

    max_bytes: int
    too_large: Callable[[], Exception]


class BodyLimit:
    """ASGI middleware: ``routes`` maps ``(METHOD, path)`` to its own limit, else ``default``."""

    def __init__(
        self, app: ASGIApp, default: Limit, routes: Mapping[tuple[str, str], Limit] | None = None
    ) -> None:
        self.app = app
        self.default = default
        self.routes = dict(routes or {})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        limit = self.routes.get((scope["method"], scope["path"]), self.default)
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit.max_bytes:
            await _response(limit.too_large())(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > limit.max_bytes:
                    # Raised inside the route's body read, so the app's handlers answer it.
                    raise limit.too_large()
            return message

        await self.app(scope, counted, send)


def _response(error: Exception) -> ASGIApp:
    if not isinstance(error, OpenAIError):
        raise TypeError(f"{type(error).__name__} lacks the OpenAI error attributes")
    return error_response(error)
