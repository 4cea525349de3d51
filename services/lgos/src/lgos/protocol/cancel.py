"""Request-scoped cancellation for non-streaming work: a client that leaves stops its run."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

from starlette.requests import ClientDisconnect, Request

T = TypeVar("T")


async def _wait_for_disconnect(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def run_or_cancel(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """Await ``work``; cancel it and raise ``ClientDisconnect`` if the client goes away first.

    The work runs in the request's own task (no extra task per request); a small watcher
    cancels that task when the ASGI server reports the disconnect.
    """
    current = asyncio.current_task()
    assert current is not None
    disconnected = False

    async def watch() -> None:
        nonlocal disconnected
        await _wait_for_disconnect(request)
        disconnected = True
        current.cancel()

    watcher = asyncio.create_task(watch())
    try:
        return await work
    except asyncio.CancelledError:
        if disconnected and current.uncancel() == 0:
            raise ClientDisconnect() from None
        raise
    finally:
        watcher.cancel()
