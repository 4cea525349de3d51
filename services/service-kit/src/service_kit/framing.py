"""Garbled HTTP framing answered in the OpenAI error envelope (LGOS, Files, offline-model).

uvicorn rejects a request it cannot parse (bad request line, bad or conflicting Content-Length /
Transfer-Encoding, invalid chunk sizes) with its own ``text/plain`` 400 before any application
code runs, so the servers' envelope handlers never see it. :class:`EnvelopeHttpToolsProtocol`
is uvicorn's httptools protocol (what ``http="auto"`` picks when httptools is installed, as
``uvicorn[standard]`` does) with that one answer replaced by an envelope. It also bounds the
request line plus headers (httptools itself has no bound): past :data:`MAX_HEAD_BYTES` the
answer is a 431 envelope. :func:`service_kit.serve.serve` runs every server with it.
"""

from __future__ import annotations

import asyncio

import orjson
from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from service_kit.envelope import envelope

PROTOCOL = "service_kit.framing:EnvelopeHttpToolsProtocol"
"""The import string for ``uvicorn.run(http=...)`` / ``uvicorn --http``."""

LINGER_SECONDS = 2.0
"""After an error answer: how long input is still read and dropped before the socket closes."""

MAX_HEAD_BYTES = 64 * 1024
"""Request line plus all header names and values. h11's default is 16 KiB and nginx's 32 KiB;
a gateway's forwarded headers and a UI's cookies stay far below 64 KiB."""


def framing_error(status: int, message: str, code: str) -> bytes:
    """A complete HTTP/1.1 response carrying the OpenAI envelope; the connection then closes."""
    body = orjson.dumps(envelope(message, "invalid_request_error", code=code))
    head = (
        b"content-type: application/json\r\n"
        b"content-length: " + str(len(body)).encode() + b"\r\n"
        b"connection: close\r\n\r\n"
    )
    return STATUS_LINE[status] + head + body


class EnvelopeHttpToolsProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol whose framing errors are OpenAI envelopes (400 / 431)."""

    head_bytes = 0  # parsed request line + headers of the current message
    unparsed_head_bytes = 0  # raw bytes received while the head is still incomplete
    reading_head = True
    head_too_large = False
    answered = False  # an error answer went out: the rest of the input is dropped

    def on_message_begin(self) -> None:
        self.head_bytes = 0
        self.unparsed_head_bytes = 0
        self.reading_head = True
        super().on_message_begin()

    def _count(self, size: int) -> None:
        self.head_bytes += size
        if self.head_bytes > MAX_HEAD_BYTES:
            self.head_too_large = True
            # Raising inside a parser callback fails the feed, which lands in send_400_response.
            raise ValueError("request head too large")

    def on_url(self, url: bytes) -> None:
        self._count(len(url))
        super().on_url(url)

    def on_header(self, name: bytes, value: bytes) -> None:
        self._count(len(name) + len(value) + 4)
        super().on_header(name, value)

    def on_headers_complete(self) -> None:
        self.reading_head = False
        self.unparsed_head_bytes = 0
        super().on_headers_complete()

    def data_received(self, data: bytes) -> None:
        if self.answered:
            return
        super().data_received(data)
        # httptools buffers a header until it ends, so a never-ending one is bounded here.
        if self.reading_head and not self.answered:
            self.unparsed_head_bytes += len(data)
            if self.unparsed_head_bytes > MAX_HEAD_BYTES:
                self.head_too_large = True
                self.send_400_response("request head too large")

    def send_400_response(self, msg: str) -> None:
        if self.head_too_large:
            response = framing_error(
                431,
                f"The request line and headers exceed {MAX_HEAD_BYTES} bytes.",
                "request_header_fields_too_large",
            )
        else:
            response = framing_error(
                400,
                "The request is not valid HTTP/1.1 (request line, headers, Content-Length, "
                "Transfer-Encoding or chunk framing).",
                "invalid_http_request",
            )
        self.answered = True
        self.transport.write(response)
        # Closing with unread input makes the kernel send a reset, which can destroy the answer
        # before the client reads it; so: FIN after the answer, drop input, close a bit later.
        if self.transport.can_write_eof():
            self.transport.write_eof()
        asyncio.get_running_loop().call_later(LINGER_SECONDS, self.transport.close)
