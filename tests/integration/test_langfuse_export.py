"""Langfuse export from real ``lgos serve`` processes, through the official OpenAI SDK, against
the recorded ingestion contract (tests/support/langfuse_ingestion.py). No Langfuse server runs
here: what is tested is what LGOS sends and how it behaves, not what Langfuse does with it.

With both keys set, every span of a request carries its ``metadata.conversation_id`` as
``langfuse.session.id`` (each request its own trace); a value Langfuse would drop (not ASCII, over
200 characters) is left off with one log line that does not hold it; the export keeps its own
credentials apart from the OTLP exporter's. Without the keys nothing is sent; with wrong keys,
or Langfuse refusing connections or answering slowly, requests succeed as fast as ever.
"""

from __future__ import annotations

import asyncio
import base64
import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.langfuse_ingestion import TRACES_PATH, LangfuseIngestion
from tests.support.lgos_processes import api_process
from tests.support.otlp_receiver import OTLPReceiver, ReceivedSpan
from tests.support.servers import Server, free_port

PUBLIC = "pk-lf-test-1234"
SECRET = "sk-lf-test-secret-zebra-4711"
COLLECTOR_TOKEN = "collector-only-token-lantern"
SESSION = "langfuse-conversation-42"
RESPONSES_ROOT = "POST /v1/responses"
CHAT_ROOT = "POST /v1/chat/completions"
WORKFLOW = "invoke_workflow scripted"
STARTUP = 90.0  # seconds; importing every graph takes a while on a busy two-core machine


def lgos_env(tmp: Path, **extra: str) -> dict[str, str]:
    return {"LGOS_STATE_DIR": str(tmp), "OTEL_BSP_SCHEDULE_DELAY": "100", **extra}


def langfuse_env(base_url: str, secret: str = SECRET) -> dict[str, str]:
    return {
        "LANGFUSE_PUBLIC_KEY": PUBLIC,
        "LANGFUSE_SECRET_KEY": secret,
        "LANGFUSE_BASE_URL": base_url,
    }


def log_lines(server: Server) -> list[dict[str, Any]]:
    text = server.log.read_text()
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def traceparent(trace_id: str) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{'5' * 16}-01"}


async def ask(sdk: AsyncOpenAI, conversation: str, trace_id: str, request_id: str = "") -> None:
    headers = traceparent(trace_id) | ({"X-Request-Id": request_id} if request_id else {})
    response = await sdk.responses.create(
        model="scripted",
        input="Hello",
        metadata={"conversation_id": conversation},
        extra_headers=headers,
    )
    assert response.status == "completed"


def of_trace(spans: list[ReceivedSpan], trace_id: str) -> list[ReceivedSpan]:
    return [s for s in spans if s.trace_id == trace_id]


@pytest.fixture(scope="module")
def ingestion() -> Iterator[LangfuseIngestion]:
    with LangfuseIngestion(PUBLIC, SECRET) as running:
        yield running


@pytest.fixture(scope="module")
def otlp() -> Iterator[OTLPReceiver]:
    with OTLPReceiver() as running:
        yield running


@pytest.fixture(scope="module")
def exporting(
    ingestion: LangfuseIngestion,
    otlp: OTLPReceiver,
    offline_model: Server,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """LGOS exporting to Langfuse and, at once, to an OTLP collector with its own header."""
    tmp = tmp_path_factory.mktemp("langfuse")
    env = lgos_env(
        tmp,
        **langfuse_env(ingestion.base_url),
        OTEL_EXPORTER_OTLP_ENDPOINT=otlp.url,
        OTEL_EXPORTER_OTLP_HEADERS=f"x-collector-token={COLLECTOR_TOKEN}",
        DEMO_API_REPORT_STEP_SECONDS="0.05",
        DEMO_API_OFFLINE_MODEL_URL=f"{offline_model.url}/v1",
    )
    with api_process(env, tmp / "lgos.log", timeout=STARTUP) as server:
        yield server


@pytest.fixture
async def sdk(exporting: Server) -> AsyncIterator[AsyncOpenAI]:
    async with sdk_client(f"{exporting.url}/v1") as client:
        yield client


def test_the_recorded_contract_refuses_what_langfuse_refuses() -> None:
    """The stand-in itself: path, Basic auth, content type, ingestion version."""
    with LangfuseIngestion(PUBLIC, SECRET) as ingestion:
        check_contract(ingestion)
    assert [a.status for a in ingestion.answered()] == [200, 401, 401, 400, 400, 404, 405]


def check_contract(ingestion: LangfuseIngestion) -> None:
    good = {
        "Authorization": basic(PUBLIC, SECRET),
        "Content-Type": "application/json",
        "x-langfuse-ingestion-version": "4",
    }
    url = f"{ingestion.base_url}{TRACES_PATH}"
    assert httpx.post(url, content=b"{}", headers=good).status_code == 200
    wrong = good | {"Authorization": basic(PUBLIC, "sk-lf-wrong")}
    assert httpx.post(url, content=b"{}", headers=wrong).status_code == 401
    unsigned = {k: v for k, v in good.items() if k != "Authorization"}
    assert httpx.post(url, content=b"{}", headers=unsigned).status_code == 401
    unversioned = {k: v for k, v in good.items() if k != "x-langfuse-ingestion-version"}
    assert httpx.post(url, content=b"{}", headers=unversioned).status_code == 400
    text = good | {"Content-Type": "text/plain"}
    assert httpx.post(url, content=b"{}", headers=text).status_code == 400
    assert httpx.post(f"{ingestion.base_url}/v1/traces", headers=good).status_code == 404
    assert httpx.get(url, headers=good).status_code == 405


async def test_one_conversation_is_two_traces_with_the_session_on_every_span(
    sdk: AsyncOpenAI, ingestion: LangfuseIngestion, otlp: OTLPReceiver
) -> None:
    first, second = "1a" * 16, "2b" * 16
    await ask(sdk, SESSION, first)
    stream = await sdk.chat.completions.create(
        model="scripted",
        messages=[{"role": "user", "content": "And again"}],
        metadata={"conversation_id": SESSION},
        stream=True,
        extra_headers=traceparent(second),
    )
    deltas = [chunk.choices[0].delta.content async for chunk in stream if chunk.choices]
    assert "".join(d or "" for d in deltas)
    ingestion.wait_for(1, CHAT_ROOT)
    received = ingestion.wait_for(1, RESPONSES_ROOT)
    for trace_id, root in ((first, RESPONSES_ROOT), (second, CHAT_ROOT)):
        spans = of_trace(received, trace_id)
        names = {s.name for s in spans}
        assert {root, WORKFLOW} <= names and any(n.split()[0] == "chat" for n in names), names
        assert {s.service for s in spans} == {"lgos"}
        assert [s.attributes.get("langfuse.session.id") for s in spans] == [SESSION] * len(spans)
        [run] = [s for s in spans if s.name == WORKFLOW]
        assert run.attributes["gen_ai.conversation.id"] == SESSION
        # The OTLP collector gets the same spans: both exports are on at once.
        collected = otlp.trace(trace_id, root=root)
        assert {s.span_id for s in collected} == {s.span_id for s in spans}
    for attempt in ingestion.answered():
        assert attempt.status == 200
        assert attempt.headers["content-type"] == "application/x-protobuf"
        assert attempt.headers["x-langfuse-ingestion-version"] == "4"
        # The OTLP exporter's own header (a collector credential) never reaches Langfuse.
        assert "x-collector-token" not in attempt.headers
        assert COLLECTOR_TOKEN not in json.dumps(attempt.headers)


async def test_a_background_run_carries_the_session_of_the_request_that_queued_it(
    sdk: AsyncOpenAI, ingestion: LangfuseIngestion
) -> None:
    trace_id = "5e" * 16
    queued = await sdk.responses.create(
        model="background-report",
        input="report",
        background=True,
        metadata={"conversation_id": SESSION},
        extra_headers=traceparent(trace_id),
    )
    while queued.status in ("queued", "in_progress"):
        await asyncio.sleep(0.05)
        queued = await sdk.responses.retrieve(queued.id)
    assert queued.status == "completed"
    deadline = time.monotonic() + 30
    run = "invoke_workflow background-report"
    while not {RESPONSES_ROOT, run} <= {s.name for s in of_trace(ingestion.received(), trace_id)}:
        assert time.monotonic() < deadline, "the background trace never reached the endpoint"
        await asyncio.sleep(0.1)
    spans = of_trace(ingestion.received(), trace_id)
    assert [s.attributes.get("langfuse.session.id") for s in spans] == [SESSION] * len(spans)


@pytest.mark.parametrize(
    ("conversation", "reason", "trace_id"),
    [("conversación-7", "not_ascii", "3c" * 16), ("c" * 201, "too_long", "4d" * 16)],
)
async def test_a_session_langfuse_would_drop_is_left_off_and_logged_without_its_value(
    sdk: AsyncOpenAI,
    ingestion: LangfuseIngestion,
    exporting: Server,
    conversation: str,
    reason: str,
    trace_id: str,
) -> None:
    request_id = f"langfuse-skip-{reason}"
    await ask(sdk, conversation, trace_id, request_id)
    deadline = time.monotonic() + 30
    while not any(s.name == RESPONSES_ROOT for s in of_trace(ingestion.received(), trace_id)):
        assert time.monotonic() < deadline, "the trace never reached the ingestion endpoint"
        await asyncio.sleep(0.1)
    spans = of_trace(ingestion.received(), trace_id)
    assert {RESPONSES_ROOT, WORKFLOW} <= {s.name for s in spans}
    assert all("langfuse.session.id" not in s.attributes for s in spans)
    [run] = [s for s in spans if s.name == WORKFLOW]
    assert run.attributes["gen_ai.conversation.id"] == conversation  # unchanged, not cut
    skipped = [
        line
        for line in log_lines(exporting)
        if line["event"] == "langfuse_session_skipped" and line.get("request_id") == request_id
    ]
    assert [(line["reason"], line["length"]) for line in skipped] == [(reason, len(conversation))]
    assert conversation not in exporting.log.read_text()
    assert SECRET not in exporting.log.read_text()


async def test_without_the_keys_nothing_is_sent(tmp_path: Path) -> None:
    with (
        LangfuseIngestion(PUBLIC, SECRET) as idle,
        api_process(
            lgos_env(tmp_path, LANGFUSE_BASE_URL=idle.base_url, LANGFUSE_PUBLIC_KEY=""),
            tmp_path / "lgos.log",
            timeout=STARTUP,
        ) as server,
    ):
        async with sdk_client(f"{server.url}/v1") as client:
            await ask(client, SESSION, "6f" * 16)
            await ask(client, "c" * 201, "7a" * 16)
        await asyncio.sleep(1.0)  # ten export intervals
        assert idle.answered() == []
        events = {line["event"] for line in log_lines(server)}
    assert not any(event.startswith("langfuse") for event in events)


async def test_wrong_keys_are_refused_and_logged_once_without_the_key(
    ingestion: LangfuseIngestion, tmp_path: Path
) -> None:
    wrong = "sk-lf-wrong-secret-otter-99"
    env = lgos_env(tmp_path, **langfuse_env(ingestion.base_url, wrong))
    with api_process(env, tmp_path / "lgos.log", timeout=STARTUP) as server:
        async with sdk_client(f"{server.url}/v1") as client:
            for n in range(3):
                await ask(client, SESSION, f"8{n}" * 16)
                await asyncio.sleep(0.3)  # each request's spans in a batch of their own
        deadline = time.monotonic() + 10
        while sum(a.status == 401 for a in ingestion.answered()) < 2:
            assert time.monotonic() < deadline, "LGOS never tried the wrong keys"
            await asyncio.sleep(0.1)
        failed = [line for line in log_lines(server) if line["event"] == "langfuse_export_failed"]
        assert [(line["level"], line["status"]) for line in failed] == [("warning", 401)]
        assert wrong not in server.log.read_text()


@pytest.fixture(params=["refusing", "slow"])
def unreachable(request: pytest.FixtureRequest) -> Iterator[tuple[str, str]]:
    """A Langfuse that refuses connections (nothing listens), or one that answers only after
    30 s: (its base URL, the error LGOS logs)."""
    if request.param == "refusing":
        yield f"http://127.0.0.1:{free_port()}", "ConnectError"
        return
    with LangfuseIngestion(PUBLIC, SECRET, delay=30) as slow:
        yield slow.base_url, "ReadTimeout"


async def test_an_unreachable_langfuse_never_slows_or_fails_a_request(
    unreachable: tuple[str, str], tmp_path: Path
) -> None:
    base_url, error = unreachable
    env = lgos_env(tmp_path, **langfuse_env(base_url), LANGFUSE_TIMEOUT="3")
    with api_process(env, tmp_path / "lgos.log", timeout=STARTUP) as server:
        async with sdk_client(f"{server.url}/v1") as client:
            await ask(client, SESSION, "90" * 16)  # warm up
            took = []
            for n in range(6):
                started = time.perf_counter()
                await ask(client, SESSION, f"9{n}" * 16)
                took.append(time.perf_counter() - started)
                await asyncio.sleep(0.2)  # exports are being tried meanwhile
        # An export on the request path would take the 3 s timeout (or fail the request).
        assert max(took) < 1.0, took
        deadline = time.monotonic() + 10
        while not any(line["event"] == "langfuse_export_failed" for line in log_lines(server)):
            assert time.monotonic() < deadline, "the failed export was not logged"
            await asyncio.sleep(0.2)
        [failed] = [line for line in log_lines(server) if line["event"] == "langfuse_export_failed"]
        assert failed["error"] == error
        assert SECRET not in server.log.read_text()
