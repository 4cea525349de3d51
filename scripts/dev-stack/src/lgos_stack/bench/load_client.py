"""The load benchmarks' lean streaming client and meters (``bench_load``, ``bench_scale``).

One raw asyncio connection per stream, HTTP/1.1 with ``Connection: close``: just enough protocol
to read a streaming Responses answer, so a thousand streams cost the load generator little. Each
stream yields its text (the concatenated ``response.output_text.delta`` events), its terminal
event and its time to first delta. Events are recognised by their JSON ``type``, so the same
client reads LGOS directly and through the LiteLLM gateway.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import psutil

TERMINAL = ("response.completed", "response.incomplete", "response.failed")


@dataclass
class OpenStreams:
    """How many streams have their response headers (``now``) or their first delta
    (``streaming``) and not yet their end, and the most open at once."""

    now: int = 0
    most: int = 0
    streaming: int = 0
    started: int = 0
    """Streams that had a first delta, ended or not."""

    def opened(self) -> None:
        self.now += 1
        self.most = max(self.most, self.now)

    def closed(self) -> None:
        self.now -= 1


@dataclass
class StreamResult:
    text: str = ""
    deltas: int = 0
    status: str | None = None
    """``completed``, ``incomplete`` or ``failed``, from the terminal event; None without one."""
    response: dict[str, Any] | None = None
    ttfd: float | None = None
    elapsed: float = 0.0
    error: str | None = None
    last_event: str | None = None
    """The type of the last event read (what a stream that hangs was waiting after)."""

    @property
    def ok(self) -> bool:
        return self.error is None and self.status == "completed"


async def stream_response(
    port: int,
    body: Mapping[str, Any],
    *,
    headers: Mapping[str, str] | None = None,
    open_streams: OpenStreams | None = None,
    path: str = "/v1/responses",
    give_up_after: float = 120.0,
) -> StreamResult:
    """POST ``body`` (with ``stream: true``) and read the event stream to its end (an error
    after ``give_up_after`` seconds without it)."""
    result = StreamResult()
    payload = orjson.dumps({**body, "stream": True})
    extra = "".join(f"{k}: {v}\r\n" for k, v in (headers or {}).items())
    head = (
        f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n"
        f"Accept: text/event-stream\r\n{extra}Connection: close\r\n"
        f"Content-Length: {len(payload)}\r\n\r\n"
    ).encode()
    started = time.perf_counter()
    try:
        async with asyncio.timeout(give_up_after):
            await _exchange(port, head + payload, result, started, open_streams)
    except TimeoutError:
        result.error = f"no end after {give_up_after:.0f} s; last event {result.last_event}"
    finally:
        result.elapsed = time.perf_counter() - started
    return result


async def _exchange(
    port: int,
    request: bytes,
    result: StreamResult,
    started: float,
    open_streams: OpenStreams | None,
) -> None:
    writer: asyncio.StreamWriter | None = None
    counted = False
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port, limit=1 << 20)
        writer.write(request)
        raw_headers = (await reader.readuntil(b"\r\n\r\n")).lower()
        if not raw_headers.startswith(b"http/1.1 200"):
            rest = await reader.read()
            status_line = raw_headers.split(b"\r\n", 1)[0].decode()
            result.error = f"{status_line}: {rest[:300].decode(errors='replace')}"
            return
        if open_streams is not None:
            open_streams.opened()
            counted = True
        events = _Events(result, started, open_streams)
        if b"transfer-encoding: chunked" in raw_headers:
            while True:
                size = int((await reader.readuntil(b"\r\n")).split(b";")[0].strip(), 16)
                if size == 0:
                    break
                events.feed((await reader.readexactly(size + 2))[:-2])
        else:
            while chunk := await reader.read(65536):
                events.feed(chunk)
        events.feed(b"\n\n")
        result.text = "".join(events.parts)
        if result.status is None and result.error is None:
            result.error = "stream ended without a terminal event"
    except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError) as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    finally:
        if counted and open_streams is not None:
            open_streams.closed()
            if result.ttfd is not None:
                open_streams.streaming -= 1
        if writer is not None:
            writer.close()


class _Events:
    """Splits the byte stream into SSE events and folds them into a ``StreamResult``."""

    def __init__(
        self, result: StreamResult, started: float, open_streams: OpenStreams | None
    ) -> None:
        self.result = result
        self.open_streams = open_streams
        self.started = started
        self.buffer = b""
        self.parts: list[str] = []

    def feed(self, data: bytes) -> None:
        self.buffer += data.replace(b"\r\n", b"\n")
        *complete, self.buffer = self.buffer.split(b"\n\n")
        for event in complete:
            for line in event.split(b"\n"):
                if line.startswith(b"data:"):
                    self.data(line[5:].strip())

    def data(self, raw: bytes) -> None:
        if not raw or raw == b"[DONE]":
            return
        event = orjson.loads(raw)
        kind = event.get("type")
        self.result.last_event = kind
        if kind == "response.output_text.delta":
            if self.result.ttfd is None:
                self.result.ttfd = time.perf_counter() - self.started
                if self.open_streams is not None:
                    self.open_streams.streaming += 1
                    self.open_streams.started += 1
            self.parts.append(event["delta"])
            self.result.deltas += 1
        elif kind in TERMINAL:
            self.result.response = event["response"]
            self.result.status = event["response"]["status"]
        elif kind == "error":
            self.result.error = f"error event: {event.get('message') or event}"


def output_text(response: Mapping[str, Any]) -> str:
    """The text of a Responses object's message items, as the SDK's ``output_text`` joins it."""
    return "".join(
        part.get("text", "")
        for item in response.get("output", [])
        if item.get("type") == "message"
        for part in item.get("content", [])
        if part.get("type") == "output_text"
    )


def tree_rss(pid: int) -> float:
    """Resident memory (MiB) of a process and its descendants (``lgos serve --workers N``: the
    supervisor and its server processes)."""
    root = psutil.Process(pid)
    total = 0
    for process in (root, *root.children(recursive=True)):
        try:
            total += process.memory_info().rss
        except psutil.NoSuchProcess:
            continue
    return float(total) / 2**20


@dataclass
class RSSMeter:
    """Samples the resident memory (MiB) of a process and its descendants every ``every``
    seconds while it runs."""

    pid: int
    open_streams: OpenStreams | None = None
    every: float = 0.05
    samples: list[tuple[float, float, int]] = field(default_factory=list)
    _task: asyncio.Task[None] | None = None

    def now(self) -> float:
        return tree_rss(self.pid)

    def start(self) -> None:
        self._task = asyncio.create_task(self._sample())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)

    @property
    def peak(self) -> float:
        return max((rss for _, rss, _ in self.samples), default=float("nan"))

    async def _sample(self) -> None:
        while True:
            open_now = self.open_streams.now if self.open_streams else 0
            self.samples.append((time.monotonic(), self.now(), open_now))
            await asyncio.sleep(self.every)


async def settle(meter: RSSMeter, seconds: float = 3.0) -> float:
    """RSS after the load, once the process had ``seconds`` to release what it held."""
    await asyncio.sleep(seconds)
    return meter.now()
