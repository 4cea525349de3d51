"""What only a real socket shows: SSE headers, ': ping' comments, disconnect cancellation."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

import httpx
import pytest
from openai import AsyncOpenAI

from tests.support.background import slow
from tests.support.engines import PING_INTERVAL
from tests.support.graphs import SCRIPTED_TEXT
from tests.support.servers import Server

pytestmark = pytest.mark.socket


async def wait_for(path: Path, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        await asyncio.sleep(0.05)
    return path.exists()


@pytest.mark.parametrize("route", ["/v1/responses", "/v1/chat/completions"])
async def test_stream_headers(lgos_server: Server, route: str) -> None:
    body = (
        {"model": "scripted", "input": "x", "stream": True}
        if route == "/v1/responses"
        else {"model": "scripted", "messages": [{"role": "user", "content": "x"}], "stream": True}
    )
    async with httpx.AsyncClient(base_url=lgos_server.url) as http:
        async with http.stream("POST", route, json=body) as response:
            assert response.status_code == 200
            assert response.headers["content-type"].startswith("text/event-stream")
            assert response.headers["cache-control"] == "no-cache"
            assert response.headers["x-accel-buffering"] == "no"
            raw = (await response.aread()).decode()
    if route == "/v1/chat/completions":
        assert raw.rstrip().endswith("data: [DONE]")
    else:
        assert "event: response.completed" in raw


async def test_silent_graph_gets_ping_comments(
    lgos_server: Server, socket_client: AsyncOpenAI
) -> None:
    body = {"model": "slow", "input": "ping-me", "stream": True, "metadata": slow(1.2)}
    async with httpx.AsyncClient(base_url=lgos_server.url) as http:
        async with http.stream("POST", "/v1/responses", json=body) as response:
            raw = (await response.aread()).decode()
    pings = raw.count(": ping\n\n")
    # 1.2 s of silence at a 0.3 s interval: about three pings, never one per event.
    assert 2 <= pings <= 5, raw
    assert raw.index(": ping") > raw.index("response.in_progress")
    assert raw.index(": ping") < raw.index("response.output_item.added")
    # The SDK ignores the comments and sees an ordinary stream.
    stream = await socket_client.responses.create(
        model="slow", input="ping-sdk", stream=True, metadata=slow(0.8)
    )
    events = [event async for event in stream]
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == SCRIPTED_TEXT
    assert PING_INTERVAL < 0.8


async def test_no_pings_while_events_flow(lgos_server: Server) -> None:
    body = {"model": "scripted", "input": "x", "stream": True}
    async with httpx.AsyncClient(base_url=lgos_server.url) as http:
        async with http.stream("POST", "/v1/responses", json=body) as response:
            raw = (await response.aread()).decode()
    assert ": ping" not in raw


@pytest.mark.parametrize("route", ["/v1/responses", "/v1/chat/completions"])
async def test_disconnect_cancels_a_streaming_run(
    lgos_server: Server, markers: Path, route: str
) -> None:
    key = f"stream-disconnect-{route.rsplit('/', 1)[-1]}"
    body: dict[str, object] = {"model": "slow", "stream": True, "metadata": slow(3.0)}
    if route == "/v1/responses":
        body["input"] = key
    else:
        body["messages"] = [{"role": "user", "content": key}]
    async with httpx.AsyncClient(base_url=lgos_server.url) as http:
        async with http.stream("POST", route, json=body) as response:
            assert response.status_code == 200
            assert await wait_for(markers / f"started-{key}")
        # Leaving the block closes the connection while the graph is still sleeping.
    assert await wait_for(markers / f"cancelled-{key}")
    await asyncio.sleep(3.5)
    assert not (markers / f"finished-{key}").exists()


async def test_disconnect_cancels_a_non_streaming_run(lgos_server: Server, markers: Path) -> None:
    key = "plain-disconnect"
    body = {"model": "slow", "input": key, "metadata": slow(3.0)}
    async with httpx.AsyncClient(base_url=lgos_server.url, timeout=1.0) as http:
        with pytest.raises(httpx.ReadTimeout):
            await http.post("/v1/responses", json=body)
    assert await wait_for(markers / f"cancelled-{key}")
    await asyncio.sleep(3.5)
    assert not (markers / f"finished-{key}").exists()


async def test_error_envelope_for_malformed_json(lgos_server: Server) -> None:
    async with httpx.AsyncClient(base_url=lgos_server.url) as http:
        response = await http.post(
            "/v1/responses", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert response.status_code == 400
        assert response.json()["error"]["type"] == "invalid_request_error"
        missing = await http.get("/v1/no-such-route")
        assert missing.status_code == 404
        assert missing.json()["error"]["code"] == "not_found"


async def test_failure_details_are_logged_not_returned(
    lgos_server: Server, socket_client: AsyncOpenAI
) -> None:
    import openai

    from tests.support.graphs import SECRET

    with pytest.raises(openai.InternalServerError) as caught:
        await socket_client.responses.create(model="broken", input="log-me")
    assert SECRET not in caught.value.response.text
    await asyncio.sleep(0.2)
    records = [
        json.loads(line)
        for line in lgos_server.log.read_text().splitlines()
        if line.startswith("{")
    ]
    failures = [r for r in records if r.get("event") == "graph run failed"]
    assert failures, "the failure must be logged"
    assert failures[-1]["model"] == "broken"
    assert SECRET in failures[-1]["exception"]
