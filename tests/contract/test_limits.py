"""Request-size and shape limits: 413 while the body is read (chunked too), 400 naming the param."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import openai
import orjson
import pytest
from openai import AsyncOpenAI

from tests.support.clients import embedded_lgos
from tests.support.servers import Server, serve_lgos

LIMIT = 64 * 1024


@pytest.fixture(scope="module")
def limited_server(
    graph_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    env = {
        **graph_env,
        "LGOS_MAX_REQUEST_BYTES": str(LIMIT),
        "LGOS_MAX_TOOLS": "4",
        "LGOS_STATE_DIR": str(tmp_path_factory.mktemp("limited-state")),
    }
    log = tmp_path_factory.mktemp("logs") / "lgos-limited.log"
    with serve_lgos("serve", "tests.support.graphs:create_registry", env=env, log=log) as server:
        yield server


def assert_too_large(response: httpx.Response) -> None:
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["type"] == "invalid_request_error"
    assert error["code"] == "request_too_large"
    assert str(LIMIT) in error["message"]


@pytest.mark.parametrize("route", ["/v1/responses", "/v1/chat/completions"])
async def test_declared_length_over_the_limit_is_413(limited_server: Server, route: str) -> None:
    body = b'{"model": "scripted", "input": "' + b"x" * LIMIT + b'"}'
    async with httpx.AsyncClient(base_url=limited_server.url) as http:
        assert_too_large(await http.post(route, content=body))


async def test_chunked_body_is_refused_while_reading(limited_server: Server) -> None:
    """A chunked body with no end in sight: the 413 arrives before the body is finished."""
    url = httpx.URL(limited_server.url)
    reader, writer = await asyncio.open_connection(url.host, url.port)
    try:
        writer.write(
            b"POST /v1/responses HTTP/1.1\r\nHost: lgos\r\nContent-Type: application/json\r\n"
            b"Transfer-Encoding: chunked\r\n\r\n"
        )
        piece = b'{"model": "scripted", "input": "' + b"x" * 16384
        for _ in range(2 * LIMIT // len(piece) + 1):
            writer.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            piece = b"x" * 16384
        await writer.drain()
        # No terminating chunk was sent: an answer now means the server stopped reading.
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
        assert head.startswith(b"HTTP/1.1 413 ")
        length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
        error = orjson.loads(await reader.readexactly(length))["error"]
        assert error["code"] == "request_too_large"
    finally:
        writer.close()


async def test_sdk_sees_413_and_the_server_still_serves(limited_server: Server) -> None:
    async with AsyncOpenAI(
        base_url=f"{limited_server.url}/v1", api_key="x", max_retries=0
    ) as client:
        with pytest.raises(openai.APIStatusError) as caught:
            await client.responses.create(model="scripted", input="y" * LIMIT)
        assert caught.value.status_code == 413
        ok = await client.responses.create(model="scripted", input="small")
        assert ok.status == "completed"
        with pytest.raises(openai.BadRequestError) as tools:
            await client.responses.create(
                model="scripted",
                input="x",
                tools=[{"type": "function", "name": f"f{i}"} for i in range(5)],
            )
        assert tools.value.param == "tools"


def deep(depth: int) -> Any:
    value: Any = {}
    for _ in range(depth):
        value = {"type": "object", "properties": {"p": value}}
    return value


SHAPES: list[tuple[dict[str, Any], str]] = [
    ({"input": [{"role": "user", "content": "x"}] * 5}, "input"),
    ({"tools": [{"type": "function", "name": "f", "description": "d" * 2048}]}, "tools[0]"),
    ({"tools": [{"type": "function", "name": "f", "parameters": deep(10)}]}, "tools[0]"),
]


@pytest.mark.parametrize(("extra", "param"), SHAPES)
async def test_shape_bounds_are_400s_naming_the_param(
    tmp_path: Path, extra: dict[str, Any], param: str
) -> None:
    async with embedded_lgos(
        tmp_path, max_input_items=4, max_tool_schema_bytes=1024, max_json_depth=12
    ) as client:
        kwargs: dict[str, Any] = {"model": "scripted", "input": "x", **extra}
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(**kwargs)
        assert caught.value.param is not None
        assert caught.value.param.startswith(param)


async def test_chat_messages_are_bounded(tmp_path: Path) -> None:
    async with embedded_lgos(tmp_path, max_input_items=2) as client:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.chat.completions.create(
                model="scripted", messages=[{"role": "user", "content": "x"}] * 3
            )
        assert caught.value.param == "messages"
        ok = await client.chat.completions.create(
            model="scripted", messages=[{"role": "user", "content": "x"}] * 2
        )
        assert ok.choices[0].message.content
