"""Server-Sent Events transport shared by both protocols.

One ASGI response that writes each batch of encoded events in a single send, keeps idle
connections alive with ``: ping`` comments and cancels the producer (and with it the graph run)
as soon as the client disconnects.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

from starlette.responses import Response
from starlette.types import Receive, Scope, Send

logger = logging.getLogger("lgos.sse")

PING = b": ping\n\n"

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class SSEResponse(Response):
    """Streams byte chunks produced by ``body`` (each already framed as SSE events)."""

    def __init__(self, body: AsyncIterator[bytes], *, ping_interval: float) -> None:
        super().__init__(status_code=200, media_type="text/event-stream")
        self.body_iterator = body
        self.ping_interval = ping_interval
        self._last_send = 0.0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        self._last_send = time.monotonic()
        producer = asyncio.create_task(self._produce(send))
        watchers = [
            asyncio.create_task(self._watch_disconnect(receive)),
            asyncio.create_task(self._ping(send)),
        ]
        try:
            await asyncio.wait([producer, watchers[0]], return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (producer, *watchers):
                task.cancel()
            await asyncio.gather(producer, *watchers, return_exceptions=True)
        if producer.done() and not producer.cancelled():
            if (exc := producer.exception()) is None:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
            else:
                logger.error("event stream producer failed", exc_info=exc)

    async def _produce(self, send: Send) -> None:
        try:
            async for chunk in self.body_iterator:
                self._last_send = time.monotonic()
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        finally:
            # Closing the generator here, inside the cancelled task, runs the graph's cleanup.
            aclose: Any = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _ping(self, send: Send) -> None:
        while True:
            await asyncio.sleep(max(0.0, self._last_send + self.ping_interval - time.monotonic()))
            if time.monotonic() - self._last_send >= self.ping_interval:
                self._last_send = time.monotonic()
                await send({"type": "http.response.body", "body": PING, "more_body": True})

    @staticmethod
    async def _watch_disconnect(receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
