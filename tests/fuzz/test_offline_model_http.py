"""offline-model is total too: any JSON or bytes is an answer or a 4xx in the OpenAI envelope."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.support.envelopes import assert_client_error
from tests.support.fuzz import HTTP_EXAMPLES, fuzz
from tests.support.hostile_json import json_values, texts
from tests.support.servers import Server, free_port, serve

ROUTES = ["/v1/responses", "/v1/chat/completions"]
LIMIT = 32 * 1024


@pytest.fixture(scope="module")
def http(offline_model: Server) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=offline_model.url, timeout=30) as client:
        yield client


fields = st.sampled_from(
    [
        "input",
        "messages",
        "tools",
        "tool_choice",
        "stream",
        "stream_options",
        "max_tokens",
        "max_output_tokens",
        "instructions",
        "metadata",
        "model",
    ]
)
parts = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "file", "input_text"]) | texts},
        optional={"text": json_values, "file": json_values},
    ),
    max_size=2,
)
messages = st.lists(
    st.fixed_dictionaries(
        {"role": st.sampled_from(["user", "tool", "assistant"]) | json_values},
        optional={"content": json_values | parts, "type": json_values, "output": json_values},
    ),
    max_size=3,
)
tools = st.lists(
    st.fixed_dictionaries(
        {"type": st.sampled_from(["function", "custom"]) | json_values},
        optional={"name": json_values, "function": json_values, "parameters": json_values},
    ),
    max_size=2,
)
bodies = st.dictionaries(fields, json_values | messages | tools, max_size=5)


@fuzz(HTTP_EXAMPLES)
@given(route=st.sampled_from(ROUTES), body=bodies)
def test_any_json_body_is_an_answer_or_a_400(
    http: httpx.Client, route: str, body: dict[str, Any]
) -> None:
    body["stream"] = False
    response = http.post(route, json=body)
    if response.status_code != 200:
        assert_client_error(response)


@fuzz(HTTP_EXAMPLES)
@given(route=st.sampled_from(ROUTES), raw=st.binary(max_size=128))
def test_any_byte_body_is_a_400(http: httpx.Client, route: str, raw: bytes) -> None:
    response = http.post(route, content=raw)
    if response.status_code != 200:
        assert_client_error(response)


@pytest.mark.parametrize(
    "body",
    [
        # Each was a 500 before offline-model validated what it reads (TypeError or
        # AttributeError in a handler).
        {"input": [1]},
        {
            "input": "x",
            "tools": [{"type": "function", "parameters": {"properties": [1]}}],
            "tool_choice": "required",
        },
        {"messages": [{"role": "user", "content": 5}]},
        {"messages": [{"role": "user", "content": "x"}], "stream": True, "stream_options": 1},
    ],
)
def test_regressions_are_400s(http: httpx.Client, body: dict[str, Any]) -> None:
    route = "/v1/chat/completions" if "messages" in body else "/v1/responses"
    error = assert_client_error(http.post(route, json=body))
    assert error["param"]


@pytest.fixture(scope="module")
def limited(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "offline-model-limited.log"
    env = {"OFFLINE_MODEL_MAX_REQUEST_BYTES": str(LIMIT)}
    with serve(["offline_model", "--port", str(port)], port=port, env=env, log=log) as server:
        yield server


def test_oversized_bodies_are_413s(limited: Server) -> None:
    body = {"input": "x" * LIMIT}
    response = httpx.post(f"{limited.url}/v1/responses", json=body)
    assert response.status_code == 413
    assert response.json()["error"]["code"] == "request_too_large"

    async def chunked() -> int:
        url = httpx.URL(limited.url)
        reader, writer = await asyncio.open_connection(url.host, url.port)
        writer.write(
            b"POST /v1/responses HTTP/1.1\r\nHost: m\r\nTransfer-Encoding: chunked\r\n\r\n"
        )
        for _ in range(2 * LIMIT // 8192 + 1):
            writer.write(b"2000\r\n" + b"x" * 8192 + b"\r\n")
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=10)
        writer.close()
        return int(head.split()[1])

    assert asyncio.run(chunked()) == 413  # answered before the (unfinished) body ended
