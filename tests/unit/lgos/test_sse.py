"""An open event stream keeps nothing it has written: neither the bytes it sent last nor the
chunk its producer handed over (a thousand idle streams would each hold their last write)."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import AsyncIterator
from typing import Any

from lgos.protocol.sse import SSEResponse

CHUNK = 2 << 20


async def test_a_written_chunk_is_not_kept_alive_until_the_next_write() -> None:
    release = asyncio.Event()

    async def body() -> AsyncIterator[bytes]:
        yield b"a" * CHUNK
        yield b"b" * CHUNK
        await release.wait()  # then idle, as a stream waiting for its model

    written: list[int] = []
    both_written = asyncio.Event()

    async def send(message: dict[str, Any]) -> None:
        written.append(len(message.get("body", b"")))
        if sum(written) >= 2 * CHUNK:
            both_written.set()

    async def receive() -> dict[str, Any]:
        await asyncio.Event().wait()  # the client never leaves
        raise AssertionError

    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        stream = asyncio.create_task(
            SSEResponse(body(), ping_interval=60)({"type": "http"}, receive, send)
        )
        await asyncio.wait_for(both_written.wait(), 10)
        await asyncio.sleep(0.05)  # the writer is back waiting for more
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    release.set()
    await stream
    assert written[-1] == 0  # the stream ended properly
    assert held < CHUNK // 4, f"{held} bytes still held"
