"""A TEST FAULT INJECTOR: a TCP proxy between a process under test and a real dependency.

Put it between LGOS (or the Files service) and PostgreSQL, Redis or a model, then break the
path on purpose while real traffic flows:

- ``cut()``: abort every open connection at once (both sides see a reset), as a server restart
  or a network drop would; new connections are forwarded again.
- ``mode = "refuse"``: new connections are accepted and reset at once (nothing is listening).
- ``mode = "blackhole"``: new connections are accepted and never answered (a dead route);
  combine with ``cut()`` so open ones go silent too.
- ``delay``: seconds added before each forwarded chunk, in both directions.
- ``requests``: every byte the clients sent upstream, kept for a test to read (headers a
  process passed on, say).

It runs its own event loop in a daemon thread, so sync fixtures and any test's loop can drive it;
every control method is thread-safe. Not product code: tests only.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from concurrent.futures import Future
from typing import Any, Literal

Mode = Literal["forward", "refuse", "blackhole"]
_CHUNK = 64 * 1024


class FaultProxy:
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1", port: int = 0):
        self.upstream = (upstream_host, upstream_port)
        self.requested_port = port
        self.port = 0
        self.mode: Mode = "forward"
        self.delay = 0.0
        self.accepted = 0
        """Connections accepted so far (in any mode)."""
        self.requests = bytearray()
        """Every byte forwarded from the clients to the upstream."""
        self._writers: set[asyncio.StreamWriter] = set()
        self._open = 0
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._server: asyncio.Server | None = None

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> FaultProxy:
        self._thread.start()
        self._call(self._start()).result(timeout=10)
        return self

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        self._call(self._stop()).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        if not self._thread.is_alive():
            self._loop.close()

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- faults --------------------------------------------------------------------------------

    def set_mode(self, mode: Mode) -> None:
        self.mode = mode

    def cut(self) -> int:
        """Reset every open connection; returns how many were cut."""
        return self._call(self._cut()).result(timeout=10)

    @property
    def open_connections(self) -> int:
        return self._open

    # -- internals ------------------------------------------------------------------------------

    def _call(self, coro: Any) -> Future[Any]:
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    async def _start(self) -> None:
        self._server = await asyncio.start_server(
            self._accept, "127.0.0.1", self.requested_port, reuse_address=True
        )
        self.port = self._server.sockets[0].getsockname()[1]

    async def _stop(self) -> None:
        if self._server is not None:
            self._server.close()
        await self._cut()
        # Finish every connection task here: a pending task left on a stopped loop is destroyed
        # later by the garbage collector, which logs from inside whatever code runs then.
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    async def _cut(self) -> int:
        cut = self._open
        for writer in list(self._writers):
            _reset(writer)
        self._writers.clear()
        return cut

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        if self.mode == "refuse":
            _reset(writer)
            return
        self._open += 1
        try:
            if self.mode == "blackhole":
                self._writers.add(writer)
                while await reader.read(_CHUNK):
                    pass  # swallow everything, answer nothing
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.upstream)
            except OSError:
                _reset(writer)
                return
            self._writers.update((writer, up_writer))
            await asyncio.gather(
                self._pipe(reader, up_writer, self.requests),
                self._pipe(up_reader, writer),
                return_exceptions=True,
            )
            for end in (writer, up_writer):
                self._writers.discard(end)
                end.close()
        except OSError:
            pass  # reset by a cut
        finally:
            self._open -= 1

    async def _pipe(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        record: bytearray | None = None,
    ) -> None:
        try:
            while data := await reader.read(_CHUNK):
                if record is not None:
                    record.extend(data)
                if self.delay:
                    await asyncio.sleep(self.delay)
                if writer not in self._writers:
                    return  # cut meanwhile
                writer.write(data)
                await writer.drain()
        finally:
            if writer in self._writers and writer.can_write_eof():
                with contextlib.suppress(OSError):
                    writer.write_eof()


def _reset(writer: asyncio.StreamWriter) -> None:
    """Close with RST rather than FIN, as a killed peer's kernel would."""
    sock = writer.get_extra_info("socket")
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    writer.transport.abort()
