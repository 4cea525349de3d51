"""The model upstream slow, failing (429/500), cut off or stalled; and a client that reads nothing.

A real LGOS process serves the demo graphs with its model behind the fault-injecting proxy
(tests/support/faulty_model.py, a FAKE in front of the real offline-model), and the real LiteLLM
proxy sits in front of that LGOS. Checked with the official SDK (event order, ``response.failed``
keeping the partial text) and raw HTTP (``: ping`` comments, a stalled socket).
"""

from __future__ import annotations

import asyncio
import json
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from openai import AsyncOpenAI

from tests.support.clients import sdk_fixture
from tests.support.gateways import GATEWAY_KEY, run_litellm_sync, serve_litellm
from tests.support.servers import Server, free_port, model_proxy, serve_lgos

MODEL_TIMEOUT = 2.0
PING_INTERVAL = 0.15
GATEWAY_PING_INTERVAL = 1.0
HEAD_EVENTS = [
    "response.created",
    "response.in_progress",
    "response.output_item.added",
    "response.content_part.added",
]
TAIL_EVENTS = [
    "response.output_text.done",
    "response.content_part.done",
    "response.output_item.done",
]


@pytest.fixture(scope="module")
def faulty_model(
    offline_model: Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("faults") / "faulty-model.log"
    with model_proxy("tests.support.faulty_model", offline_model, log) as server:
        yield server


@pytest.fixture(scope="module")
def lgos(faulty_model: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    state = tmp_path_factory.mktemp("faults-lgos")
    env = {
        "LGOS_STATE_DIR": str(state),
        "LGOS_SSE_PING_INTERVAL": str(PING_INTERVAL),
        "DEMO_API_OFFLINE_MODEL_URL": f"{faulty_model.url}/v1",
        "DEMO_API_MODEL_TIMEOUT": str(MODEL_TIMEOUT),
    }
    target = "lgos_demo_graphs.registry:create_registry"
    with serve_lgos("serve", target, env=env, log=state / "lgos.log") as server:
        yield server


@pytest.fixture(scope="module")
def gateway(lgos: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    state = tmp_path_factory.mktemp("faults-gateway")
    config = state / "litellm.yaml"
    synced = run_litellm_sync("--lgos-url", lgos.url, "--config", str(config))
    assert synced.returncode == 0, synced.stderr
    # The gateway's own keep-alive (15 s in the shipped config) at LiteLLM's minimum, 1 s.
    served = yaml.safe_load(config.read_text())
    assert served["litellm_settings"]["sse_keepalive_ping_interval_seconds"] == 15
    served["litellm_settings"]["sse_keepalive_ping_interval_seconds"] = GATEWAY_PING_INTERVAL
    config.write_text(yaml.safe_dump(served))
    env = {
        "FILES_API_BASE": f"http://127.0.0.1:{free_port()}/v1",
        "FILES_API_KEY": "sk-unused",
        "MCP_DEMO_DB_URL": f"http://127.0.0.1:{free_port()}/mcp",
    }
    with serve_litellm(config, state, env, name="litellm-faults") as server:
        yield server


direct = sdk_fixture("lgos")
through = sdk_fixture("gateway", api_key=GATEWAY_KEY)


async def events(client: AsyncOpenAI, model: str, prompt: str) -> list[Any]:
    stream = await client.responses.create(model=model, input=prompt, stream=True)
    return [event async for event in stream]


def deltas(streamed: list[Any]) -> str:
    return "".join(e.delta for e in streamed if e.type == "response.output_text.delta")


def assert_failed_keeping(streamed: list[Any], *, partial: bool) -> None:
    """The stream ends in response.failed; any text already streamed is kept, marked incomplete."""
    kinds = [e.type for e in streamed]
    assert kinds[-1] == "response.failed", kinds
    assert "response.completed" not in kinds
    assert [e.sequence_number for e in streamed] == list(range(len(streamed)))
    failed = streamed[-1].response
    assert failed.status == "failed"
    assert failed.error is not None and failed.error.code == "server_error"
    text = deltas(streamed)
    if not partial:
        assert kinds == ["response.created", "response.in_progress", "response.failed"]
        assert failed.output == []
        return
    assert kinds[: len(HEAD_EVENTS)] == HEAD_EVENTS
    assert set(kinds[len(HEAD_EVENTS) : -4]) == {"response.output_text.delta"}
    # The unfinished message is closed as incomplete, then the response fails.
    assert kinds[-4:] == [*TAIL_EVENTS, "response.failed"]
    assert text  # something was streamed before the fault
    assert streamed[-2].item.status == "incomplete"
    [message] = failed.output
    assert message.status == "incomplete"
    assert message.content[0].text == streamed[-4].text == text


async def faults_seen(faulty_model: Server) -> dict[str, int]:
    async with httpx.AsyncClient() as http:
        counts: dict[str, int] = (await http.get(f"{faulty_model.url}/faults")).json()
        return counts


@pytest.mark.parametrize("status", ["429", "500"])
async def test_model_error_is_response_failed_after_one_retry(
    direct: AsyncOpenAI, faulty_model: Server, status: str
) -> None:
    before = (await faults_seen(faulty_model)).get(status, 0)
    streamed = await events(direct, "simple-graph", f"fault={status} hello")
    assert_failed_keeping(streamed, partial=False)
    # The graphs' model client retried once (max_retries=1), then gave up: no retry storm.
    assert (await faults_seen(faulty_model))[status] - before == 2


async def test_stream_cut_mid_answer_keeps_the_partial_text(direct: AsyncOpenAI) -> None:
    streamed = await events(direct, "simple-graph", "fault=cut:6 tell me a story")
    assert_failed_keeping(streamed, partial=True)


async def test_stalled_model_fails_at_the_timeout_with_pings_meanwhile(lgos: Server) -> None:
    body = {"model": "simple-graph", "input": "fault=stall:6 hello there", "stream": True}
    started = time.monotonic()
    lines: list[tuple[float, str]] = []
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", f"{lgos.url}/v1/responses", json=body) as response,
    ):
        async for line in response.aiter_lines():
            lines.append((time.monotonic() - started, line))
    elapsed = time.monotonic() - started
    data = [json.loads(line[6:]) for _, line in lines if line.startswith("data: ")]
    assert data[-1]["type"] == "response.failed"
    # Not a hang: failed once the model had been silent for the configured timeout.
    assert MODEL_TIMEOUT <= elapsed < MODEL_TIMEOUT + 20, elapsed
    text = "".join(d["delta"] for d in data if d["type"] == "response.output_text.delta")
    assert text and data[-1]["response"]["output"][0]["content"][0]["text"] == text
    last_delta = max(t for t, line in lines if "output_text.delta" in line)
    pings = [t for t, line in lines if line == ": ping" and t > last_delta]
    # The silence was filled with comments, about one per interval.
    assert len(pings) >= int(MODEL_TIMEOUT / PING_INTERVAL) // 2, pings


async def test_slow_model_start_is_kept_alive_with_pings(lgos: Server, direct: AsyncOpenAI) -> None:
    prompt = "fault=slow:0.6 hello there"
    body = {"model": "simple-graph", "input": prompt, "stream": True}
    lines: list[str] = []
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", f"{lgos.url}/v1/responses", json=body) as response,
    ):
        lines = [line async for line in response.aiter_lines()]
    kinds = [json.loads(line[6:])["type"] for line in lines if line.startswith("data: ")]
    assert kinds[-1] == "response.completed"
    first_delta = next(i for i, line in enumerate(lines) if "output_text.delta" in line)
    # 4 chunks x 0.6 s of silence with a 0.15 s interval: pings before and between tokens.
    assert lines[:first_delta].count(": ping") >= 2
    assert lines.count(": ping") >= 8
    # The SDK ignores the comments: the same answer as from a model that is not slow.
    streamed = await events(direct, "simple-graph", prompt)
    assert streamed[-1].type == "response.completed"
    assert deltas(streamed) == streamed[-1].response.output_text
    assert "hello there" in deltas(streamed)


@pytest.mark.parametrize("prompt", ["fault=cut:6 tell me a story", "fault=500 hello"])
async def test_the_gateway_passes_failures_through_unchanged(
    direct: AsyncOpenAI, through: AsyncOpenAI, prompt: str
) -> None:
    straight = await events(direct, "simple-graph", prompt)
    via = await events(through, "lgos/simple-graph", prompt)
    assert [e.type for e in via] == [e.type for e in straight]
    assert_failed_keeping(via, partial="cut" in prompt)
    assert deltas(via) == deltas(straight)
    assert via[-1].response.error == straight[-1].response.error


async def test_the_gateway_keeps_a_slow_stream_alive(gateway: Server) -> None:
    """LGOS's comments do not cross LiteLLM; the gateway's own keep-alive fills the silence."""
    body = {"model": "lgos/simple-graph", "input": "fault=slow:1.5 hello", "stream": True}
    headers = {"Authorization": f"Bearer {GATEWAY_KEY}"}
    async with (
        httpx.AsyncClient(timeout=60) as http,
        http.stream("POST", f"{gateway.url}/v1/responses", json=body, headers=headers) as response,
    ):
        lines = [line async for line in response.aiter_lines()]
    data = [line[6:] for line in lines if line.startswith("data: ")]
    # LiteLLM appends a `data: [DONE]` line to Responses streams (OpenAI and LGOS send none).
    assert data[-1] == "[DONE]"
    assert json.loads(data[-2])["type"] == "response.completed"
    # 4 gaps of 1.5 s with a 1 s interval: at least one ping in each.
    assert lines.count(": ping") >= 4, [line for line in lines if not line.startswith("data")]


WORDS = 1000
WORD = 2000  # characters: offline-model streams one word per chunk, so 1000 chunks of 2 KB


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def stalled_reader(url: str, body: bytes) -> socket.socket:
    """A client that sends a streaming request and then reads nothing (a 4 KiB receive window)."""
    host, port = url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect((host, int(port)))
    head = (
        f"POST /v1/responses HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    )
    sock.sendall(head.encode() + body)
    return sock


def read_all(sock: socket.socket) -> bytes:
    chunks = []
    while chunk := sock.recv(1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def send_queue(port: str, peer: int) -> int:
    """Bytes LGOS's kernel holds unsent towards ``peer`` (``ss``: the stalled socket's Send-Q)."""
    shown = subprocess.run(
        ["ss", "-tnH", "sport", "=", f":{port}", "dport", "=", f":{peer}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return int(shown[2]) if shown else 0


# The bound on LGOS's growth while one client reads nothing. The stalled answer (2 MB of text) is
# held whole by design: the request body, the model's message, the streamed pieces and the final
# Response with its done events are ~8 copies (~16 MB; measured +17 MB here). Back-pressure caps
# the rest at the 1 MiB SSE window (lgos.protocol.sse) plus the socket; buffering the 10 MB event
# stream as Python objects would cost several times that again.
RSS_GROWTH_BOUND_KIB = 48 * 1024


async def test_a_client_reading_nothing_holds_only_its_own_stream(
    lgos: Server, direct: AsyncOpenAI
) -> None:
    pid = lgos.process.pid
    words = " ".join(f"{i:06d}" + "x" * (WORD - 6) for i in range(WORDS))
    body = json.dumps({"model": "simple-graph", "input": words, "stream": True}).encode()
    # Warm-up: the first long answer's allocations are not the slow client's.
    warm = await events(direct, "simple-graph", words)
    assert warm[-1].type == "response.completed"
    baseline = rss_kib(pid)
    sock = await asyncio.to_thread(stalled_reader, lgos.url, body)
    samples: list[int] = []
    others = asyncio.gather(*(events(direct, "simple-graph", f"other {i}") for i in range(5)))
    for _ in range(40):
        samples.append(rss_kib(pid))
        await asyncio.sleep(0.1)
    # Other streams are not held up by the stalled one.
    for streamed in await others:
        assert streamed[-1].type == "response.completed"
        assert deltas(streamed) == streamed[-1].response.output_text
    assert max(samples) - baseline < RSS_GROWTH_BOUND_KIB, (baseline, samples)
    # The stall reached LGOS: its kernel holds unsent bytes for this client...
    stalled = send_queue(lgos.url.rsplit(":", 1)[1], sock.getsockname()[1])
    raw = await asyncio.to_thread(read_all, sock)
    sock.close()
    # ...far fewer than the whole stream, which still arrives complete once the client reads.
    assert 0 < stalled < len(raw) // 2, (stalled, len(raw))
    data = [line[6:] for line in raw.decode().split("\n") if line.startswith("data: ")]
    final = json.loads(data[-1])
    assert final["type"] == "response.completed"
    assert final["response"]["output"][0]["content"][0]["text"] == deltas(warm)
