"""Server-Sent Events transport shared by both protocols.

One ASGI response per stream with three jobs: write what the encoder produces, keep idle
connections alive with ``: ping`` comments, and cancel the producer (and with it the graph run)
as soon as the client disconnects. A held stream costs two tasks besides the request's own (the
producer and the disconnect watcher; the request task writes, the ping is a timer): at a
thousand open streams every task is ~1.3 KB and a wake-up per token.

Writes are coalesced. The first writes of a stream go out at once (so the first delta is never
held back); after that, events that arrive within ``COALESCE_WINDOW`` of the previous write join
one write. A write per token costs more than the token itself (a socket write plus every ASGI
middleware layer), and a 2 ms window is invisible to a reader.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from service_kit import metrics
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

logger = logging.getLogger("lgos.sse")

PING = b": ping\n\n"
COALESCE_WINDOW = 0.002
IMMEDIATE_WRITES = 2
MAX_BUFFERED_BYTES = 1 << 20

SSE_HEADERS: list[tuple[bytes, bytes]] = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


class SSEResponse(Response):
    """Streams byte chunks produced by ``body`` (each already framed as SSE events)."""

    def __init__(
        self,
        body: AsyncIterator[bytes],
        *,
        ping_interval: float,
        on_close: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__(status_code=200, media_type="text/event-stream")
        self.body_iterator = body
        self.on_close = on_close
        self.ping_interval = ping_interval
        self._pending: list[bytes] = []
        self._pending_bytes = 0
        self._ready = asyncio.Event()
        self._drained = asyncio.Event()
        self._finished = False
        self._last_activity = 0.0
        self._ping_handle: asyncio.TimerHandle | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not metrics.enabled():
            await self._serve(scope, receive, send)
            return
        streams = metrics.child(metrics.OPEN_STREAMS, "lgos")
        streams.inc()
        try:
            await self._serve(scope, receive, send)
        finally:
            streams.dec()

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        self._last_activity = time.monotonic()
        loop = asyncio.get_running_loop()
        writer = asyncio.current_task()
        assert writer is not None
        producer = asyncio.create_task(self._produce())
        watcher = asyncio.create_task(self._watch_disconnect(receive))
        closing = False

        def on_disconnect(task: asyncio.Task[None]) -> None:
            # The client left while this task was still writing: stop it (and so the stream).
            if not closing and not task.cancelled():
                writer.cancel()

        watcher.add_done_callback(on_disconnect)
        self._ping_handle = loop.call_later(self.ping_interval, self._ping_tick, loop)
        try:
            await self._write(send)
        except asyncio.CancelledError:
            # Swallowed only when the disconnect alone cancelled it, not a server shutdown too.
            if not (watcher.done() and not watcher.cancelled()) or writer.uncancel() > 0:
                raise
        except Exception as exc:
            logger.error("event stream failed", exc_info=exc)
        finally:
            closing = True  # no await since _write ended: a late disconnect cancels nothing
            self._ping_handle.cancel()
            producer.cancel()
            watcher.cancel()
            await asyncio.gather(producer, watcher, return_exceptions=True)
            if self.on_close is not None:
                # Runs even when the body never started (a client gone before the first byte).
                await asyncio.shield(self.on_close())
        if producer.done() and not producer.cancelled() and (failure := producer.exception()):
            logger.error("event stream failed", exc_info=failure)

    def _push(self, chunk: bytes) -> None:
        self._pending.append(chunk)
        self._pending_bytes += len(chunk)
        self._last_activity = time.monotonic()
        self._ready.set()

    async def _produce(self) -> None:
        try:
            async for chunk in self.body_iterator:
                self._push(chunk)
                del chunk  # not kept alive here until the next one comes: the writer drops it
                if self._pending_bytes > MAX_BUFFERED_BYTES:
                    # A slow reader: stop pulling from the graph until the socket catches up.
                    self._drained.clear()
                    await self._drained.wait()
        finally:
            self._finished = True
            self._ready.set()
            # Closing the generator here, inside the cancelled task, runs the graph's cleanup.
            aclose: Any = getattr(self.body_iterator, "aclose", None)
            if aclose is not None:
                await aclose()

    async def _write(self, send: Send) -> None:
        writes = 0
        last_write = 0.0
        while True:
            await self._ready.wait()
            if writes >= IMMEDIATE_WRITES and not self._finished:
                wait = last_write + COALESCE_WINDOW - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
            self._ready.clear()
            if self._pending:
                await self._flush(send)
                writes += 1
                last_write = time.monotonic()
            if self._finished and not self._pending:
                await send({"type": "http.response.body", "body": b"", "more_body": False})
                return

    async def _flush(self, send: Send) -> None:
        """Write what is pending, in a frame of its own: the joined bytes end with it rather
        than staying referenced by the writer until the next write (for as long as a stream
        sits idle, its last write would stay in memory)."""
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_bytes = 0
        self._drained.set()
        await send({"type": "http.response.body", "body": data, "more_body": True})

    def _ping_tick(self, loop: asyncio.AbstractEventLoop) -> None:
        idle_for = time.monotonic() - self._last_activity
        if idle_for >= self.ping_interval:
            self._push(PING)
            idle_for = 0.0
        self._ping_handle = loop.call_later(self.ping_interval - idle_for, self._ping_tick, loop)

    @staticmethod
    async def _watch_disconnect(receive: Receive) -> None:
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
