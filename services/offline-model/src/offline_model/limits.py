"""The request-size guard: 413 by Content-Length at once, or as a (chunked) body arrives."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from offline_model.http import RequestError


def too_large(limit: int) -> RequestError:
    return RequestError(
        f"The request body exceeds the limit of {limit} bytes.",
        status_code=413,
        code="request_too_large",
    )


class BodySizeLimit:
    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await too_large(self.max_bytes).response()(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise too_large(self.max_bytes)
            return message

        await self.app(scope, counted, send)
