"""Garbled HTTP framing on a raw socket: an OpenAI envelope 4xx from LGOS, Files and offline-model.

Each real server process (started through its own CLI, as compose and `make dev` run it) gets
byte sequences no HTTP client would send; the answer must be the envelope with the right 4xx,
``Content-Type: application/json`` and ``Connection: close``, and the server must then serve
the next good connection. A Hypothesis property sends random bytes (and mutated requests): never
a 5xx, never a body outside the envelope.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.files import FilesProcess
from tests.support.fuzz import HTTP_EXAMPLES, fuzz
from tests.support.servers import Server

ENVELOPE_KEYS = {"message", "type", "param", "code"}
HEAD = b"POST /v1/responses HTTP/1.1\r\nHost: t\r\nContent-Type: application/json\r\n"
GOOD = b"GET /health HTTP/1.1\r\nHost: t\r\n\r\n"
GOOD_THEN_CLOSE = b"GET /health HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"

GARBLED: dict[str, tuple[bytes, int]] = {
    "content-length not a number": (HEAD + b"Content-Length: abc\r\n\r\n{}", 400),
    "negative content-length": (HEAD + b"Content-Length: -5\r\n\r\n{}", 400),
    "two different content-lengths": (
        HEAD + b"Content-Length: 2\r\nContent-Length: 7\r\n\r\n{}",
        400,
    ),
    "content-length with transfer-encoding": (
        HEAD + b"Content-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        400,
    ),
    "unknown transfer-encoding": (HEAD + b"Transfer-Encoding: chunked, zip\r\n\r\n0\r\n\r\n", 400),
    "chunk size not hex": (HEAD + b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n", 400),
    "chunk size overflows": (
        HEAD + b"Transfer-Encoding: chunked\r\n\r\n" + b"f" * 40 + b"\r\n{}\r\n",
        400,
    ),
    "chunk without its CRLF": (
        HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
        400,
    ),
    "request line garbage": (b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 400),
    "method not a token": (b"G(T /health HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    "unknown http version": (b"GET /health HTTP/9.9\r\nHost: t\r\n\r\n", 400),
    "space in the target": (b"GET /a b HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    "NUL in the target": (b"GET /\x00 HTTP/1.1\r\nHost: t\r\n\r\n", 400),
    "header without a colon": (b"GET /health HTTP/1.1\r\nHost t\r\n\r\n", 400),
    "control character in a header value": (b"GET /health HTTP/1.1\r\nX-A: a\x01b\r\n\r\n", 400),
    "oversized header": (b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 100_000 + b"\r\n\r\n", 431),
    "too many headers": (
        b"GET /health HTTP/1.1\r\n" + b"".join(b"X-%d: v\r\n" % i for i in range(10_000)) + b"\r\n",
        431,
    ),
    "oversized target": (b"GET /" + b"a" * 100_000 + b" HTTP/1.1\r\nHost: t\r\n\r\n", 431),
    "never-ending header": (b"GET /health HTTP/1.1\r\nX-Big: " + b"a" * 200_000, 431),
}


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: bytes


async def exchange(url: str, data: bytes, half_close: bool = False) -> Answer | None:
    """Send ``data`` on a new connection and read until the server closes it (or 10 s)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    reader, writer = await asyncio.open_connection(host, int(port))
    try:
        try:
            writer.write(data)
            await writer.drain()
            if half_close:
                writer.write_eof()
        except ConnectionError:
            pass  # the server answered and closed before taking everything
        raw = b""
        with contextlib.suppress(ConnectionError):
            raw = await asyncio.wait_for(reader.read(-1), 10)
    finally:
        writer.close()
    if not raw:
        return None
    head, _, body = raw.partition(b"\r\n\r\n")
    status_line, *lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in (line.partition(":") for line in lines)}
    if "content-length" in headers:  # a pipelined second answer may follow
        body = body[: int(headers["content-length"])]
    return Answer(int(status_line.split(" ")[1]), headers, body)


def assert_envelope(answer: Answer) -> dict[str, Any]:
    assert answer.headers.get("content-type") == "application/json", answer
    body = json.loads(answer.body)
    assert set(body) == {"error"} and set(body["error"]) == ENVELOPE_KEYS, body
    assert body["error"]["type"] == "invalid_request_error"
    return dict(body["error"])


@pytest.fixture(scope="module", params=["lgos", "files", "offline-model"])
def server(request: pytest.FixtureRequest, fuzzed_lgos: Server, offline_model: Server) -> Server:
    if request.param == "lgos":
        return fuzzed_lgos
    if request.param == "files":
        files: FilesProcess = request.getfixturevalue("files_process")
        return files.server
    return offline_model


@pytest.mark.parametrize("case", list(GARBLED))
def test_garbled_framing_is_an_envelope_and_the_server_carries_on(
    server: Server, case: str
) -> None:
    data, status = GARBLED[case]
    answer = asyncio.run(exchange(server.url, data))
    assert answer is not None, "the server closed without an answer"
    assert answer.status == status, answer
    assert answer.headers.get("connection") == "close"
    error = assert_envelope(answer)
    assert error["param"] is None
    expected = "request_header_fields_too_large" if status == 431 else "invalid_http_request"
    assert error["code"] == expected
    after = asyncio.run(exchange(server.url, GOOD_THEN_CLOSE))
    assert after is not None and after.status == 200, after


def test_headers_within_the_bound_are_served(server: Server) -> None:
    # 60 KiB of headers: under the 64 KiB bound, so a big cookie still gets through.
    data = GOOD_THEN_CLOSE[:-2] + b"X-Big: " + b"a" * 60_000 + b"\r\n\r\n"
    answer = asyncio.run(exchange(server.url, data))
    assert answer is not None and answer.status == 200, answer


# Random bytes, and real requests with random bytes spliced in: closer to what a broken
# proxy or a scanner sends.
mutated = st.tuples(
    st.sampled_from(
        [
            GOOD,
            HEAD + b"Content-Length: 2\r\n\r\n{}",
            HEAD + b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n",
        ]
    ),
    st.integers(0, 200),
    st.binary(min_size=1, max_size=64),
).map(lambda t: t[0][: t[1]] + t[2] + t[0][t[1] :])


@fuzz(max_examples=HTTP_EXAMPLES)
@given(data=st.binary(max_size=512) | mutated)
def test_random_bytes_never_get_a_5xx_or_a_bare_body(server: Server, data: bytes) -> None:
    answer = asyncio.run(exchange(server.url, data, half_close=True))
    if answer is None:
        return  # an incomplete request the server dropped at EOF: nothing was answered
    assert answer.status < 500, answer
    if answer.status >= 400:
        assert_envelope(answer)
