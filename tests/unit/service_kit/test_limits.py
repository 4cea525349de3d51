"""Body limits while reading: a declared Content-Length at once, a chunked body as it arrives,
each route its own limit, each service its own 413 error."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator

import httpx
import pytest
from fastapi import FastAPI, Request
from service_kit.envelope import envelope, envelope_handler
from service_kit.limits import BodyLimit, Limit


class TooLargeError(Exception):
    status_code = 413
    type = "invalid_request_error"
    param = None
    code = "too_large"

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.message = f"Over {limit} bytes."


def limited_app(reads: list[int]) -> FastAPI:
    app = FastAPI()
    app.add_exception_handler(TooLargeError, envelope_handler)

    @app.post("/small")
    @app.post("/upload")
    async def read(request: Request) -> dict[str, int]:
        size = len(await request.body())
        reads.append(size)
        return {"read": size}

    upload = Limit(100, functools.partial(TooLargeError, 90))
    app.add_middleware(
        BodyLimit,
        default=Limit(10, functools.partial(TooLargeError, 10)),
        routes={("POST", "/upload"): upload},
    )
    return app


async def chunks(total: int, size: int = 4) -> AsyncIterator[bytes]:
    for start in range(0, total, size):
        yield b"x" * min(size, total - start)


@pytest.fixture
def reads() -> list[int]:
    return []


@pytest.fixture
async def client(reads: list[int]) -> AsyncIterator[httpx.AsyncClient]:
    transport = httpx.ASGITransport(app=limited_app(reads))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


async def test_within_the_limit_the_body_reaches_the_route(
    client: httpx.AsyncClient, reads: list[int]
) -> None:
    assert (await client.post("/small", content=b"x" * 10)).json() == {"read": 10}
    assert (await client.post("/small", content=chunks(10))).json() == {"read": 10}
    assert reads == [10, 10]


async def test_a_declared_length_over_the_limit_is_refused_before_the_route(
    client: httpx.AsyncClient, reads: list[int]
) -> None:
    response = await client.post("/small", content=b"x" * 11)
    assert response.status_code == 413
    assert response.json() == envelope("Over 10 bytes.", "invalid_request_error", None, "too_large")
    assert reads == []  # answered by the middleware itself


async def test_a_chunked_body_fails_its_read_once_past_the_limit(
    client: httpx.AsyncClient, reads: list[int]
) -> None:
    response = await client.post("/small", content=chunks(12))
    assert "content-length" not in response.request.headers
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "Over 10 bytes."
    assert reads == []  # the route's read raised


async def test_a_route_with_its_own_limit_and_error(client: httpx.AsyncClient) -> None:
    assert (await client.post("/upload", content=b"x" * 100)).json() == {"read": 100}
    refused = await client.post("/upload", content=b"x" * 101)
    assert refused.status_code == 413
    assert refused.json()["error"]["message"] == "Over 90 bytes."
    streamed = await client.post("/upload", content=chunks(101))
    assert streamed.json()["error"]["message"] == "Over 90 bytes."


async def test_the_route_limit_is_by_method_and_path(client: httpx.AsyncClient) -> None:
    # PUT /upload is not the upload route: the default limit applies (before the 405).
    response = await client.put("/upload", content=b"x" * 50)
    assert response.status_code == 413
    assert response.json()["error"]["message"] == "Over 10 bytes."


async def test_an_error_without_the_envelope_fields_is_a_programming_error() -> None:
    app = FastAPI()
    app.add_middleware(BodyLimit, default=Limit(1, lambda: ValueError("plain")))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        with pytest.raises(TypeError, match="ValueError lacks the OpenAI error attributes"):
            await client.post("/", content=b"xx")
