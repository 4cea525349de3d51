"""The gateway hop in the caller's trace: the real LiteLLM proxy (its own OpenTelemetry
integration, switched on by the standard ``OTEL_*`` variables) in front of a traced LGOS, both
exporting over OTLP to a test receiver.

One trace runs caller -> LiteLLM -> LGOS -> graph -> model: LiteLLM's server span continues the
caller's ``traceparent`` and LGOS's server span is a child of it. No message content is on the
gateway's spans unless ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` opts in; without the
``OTEL_*`` variables the gateway traces nothing and LGOS continues the caller's own span.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.gateways import GATEWAY_KEY, run_litellm_sync, serve_litellm
from tests.support.otlp_receiver import OTLPReceiver, ReceivedSpan
from tests.support.servers import Server, free_port, serve

SERVER_KIND = 2  # OTLP's SPAN_KIND_SERVER
CLIENT_KIND = 3
UNUSED = "http://127.0.0.1:9"
MODEL = "lgos/simple-graph"
GATEWAY_CHAT = f"chat {MODEL}"


def otlp(receiver: OTLPReceiver) -> dict[str, str]:
    return {"OTEL_EXPORTER_OTLP_ENDPOINT": receiver.url, "OTEL_BSP_SCHEDULE_DELAY": "100"}


@pytest.fixture(scope="module")
def traced_lgos(
    offline_model: Server, otlp_receiver: OTLPReceiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """The demo graphs, their model the offline-model in echo mode (answers quote the prompt)."""
    tmp = tmp_path_factory.mktemp("traced-lgos")
    port = free_port()
    env = {
        **otlp(otlp_receiver),
        "OTEL_SERVICE_NAME": "lgos",
        "LGOS_PORT": str(port),
        "LGOS_STATE_DIR": str(tmp / "state"),
        "DEMO_API_OFFLINE_MODEL_URL": f"{offline_model.url}/v1",
        "DEMO_API_WEB_SEARCH_URL": UNUSED,
    }
    with serve(
        ["lgos", "serve", "lgos_demo_graphs.registry:create_registry"],
        port=port,
        env=env,
        log=tmp / "lgos.log",
        timeout=180,
    ) as server:
        yield server


@pytest.fixture(scope="module")
def gateway_config(traced_lgos: Server, tmp_path_factory: pytest.TempPathFactory) -> Path:
    config = tmp_path_factory.mktemp("gateways") / "litellm.yaml"
    synced = run_litellm_sync("--lgos-url", traced_lgos.url, "--config", str(config))
    assert synced.returncode == 0, synced.stderr
    return config


@contextmanager
def gateway(config: Path, env: dict[str, str], name: str) -> Iterator[AsyncOpenAI]:
    """A LiteLLM proxy serving ``config`` with ``env`` (its log ``<name>.log`` beside it), and
    the SDK against it."""
    base = {"MCP_DEMO_DB_URL": f"{UNUSED}/mcp", "FILES_API_BASE": UNUSED, "FILES_API_KEY": "x"}
    # Three proxies start in this module; importing LiteLLM alone costs ≈ 26 s of CPU, minutes
    # on a busy shared machine.
    with serve_litellm(config, config.parent, {**base, **env}, name, timeout=420) as server:
        yield sdk_client(f"{server.url}/v1", api_key=GATEWAY_KEY)


@pytest.fixture(scope="module")
async def traced(gateway_config: Path, otlp_receiver: OTLPReceiver) -> AsyncIterator[AsyncOpenAI]:
    with gateway(gateway_config, otlp(otlp_receiver), "traced") as client:
        async with client:
            yield client


def traceparent(trace_id: str, span_id: str) -> dict[str, str]:
    return {"traceparent": f"00-{trace_id}-{span_id}-01"}


def one_trace(receiver: OTLPReceiver, trace_id: str) -> list[ReceivedSpan]:
    """The trace once the gateway's server and model-call spans and LGOS's server span are in:
    each process exports its own batches, and a streamed call's server span ends only after
    the stream closed, later than the others."""
    wanted = {("litellm", SERVER_KIND), ("litellm", CLIENT_KIND), ("lgos", SERVER_KIND)}
    deadline = time.monotonic() + 60
    while True:
        spans = receiver.trace(trace_id, root=GATEWAY_CHAT, timeout=0)  # this loop waits
        if wanted <= {(s.service, s.kind) for s in spans} or time.monotonic() > deadline:
            return spans
        time.sleep(0.1)


def only(spans: list[ReceivedSpan], service: str, kind: int) -> ReceivedSpan:
    [span] = [s for s in spans if s.service == service and s.kind == kind]
    return span


def the_hop(spans: list[ReceivedSpan], caller_span: str) -> tuple[ReceivedSpan, ReceivedSpan]:
    """The gateway's server span under the caller's, LGOS's server span under it; the gateway's
    model call (LiteLLM's own client span) beside LGOS's, under the same server span."""
    gateway = only(spans, "litellm", SERVER_KIND)
    assert gateway.parent_id == caller_span
    call = only(spans, "litellm", CLIENT_KIND)
    assert (call.name, call.parent_id) == (GATEWAY_CHAT, gateway.span_id)
    assert call.attributes["gen_ai.request.model"] == MODEL
    lgos = only(spans, "lgos", SERVER_KIND)
    assert lgos.parent_id == gateway.span_id
    return gateway, lgos


async def test_a_call_through_the_gateway_is_one_trace_under_the_callers(
    traced: AsyncOpenAI, otlp_receiver: OTLPReceiver
) -> None:
    caller_trace, caller_span = "1a" * 16, "1b" * 8
    reply = await traced.chat.completions.create(
        model=MODEL,
        messages=[{"role": "user", "content": "Hello through the gateway"}],
        extra_headers=traceparent(caller_trace, caller_span),
    )
    assert reply.choices[0].message.content
    spans = one_trace(otlp_receiver, caller_trace)
    assert {s.trace_id for s in spans} == {caller_trace}
    assert {s.service for s in spans} == {"litellm", "lgos"}
    gateway, lgos = the_hop(spans, caller_span)
    assert (gateway.name, gateway.attributes["http.status_code"]) == (
        "POST /v1/chat/completions",
        200,
    )
    assert lgos.attributes["http.response.status_code"] == 200
    # Then LGOS's own spans: the run under its server span, the model call under the run.
    [run] = [s for s in spans if s.name == "invoke_workflow simple-graph"]
    assert run.parent_id == lgos.span_id
    [model_call] = [s for s in spans if s.name == "chat offline-model"]
    assert model_call.parent_id == run.span_id


async def test_a_streamed_responses_call_is_one_trace_too(
    traced: AsyncOpenAI, otlp_receiver: OTLPReceiver
) -> None:
    caller_trace, caller_span = "2a" * 16, "2b" * 8
    stream = await traced.responses.create(
        model=MODEL,
        input="Stream hello through the gateway",
        stream=True,
        extra_headers=traceparent(caller_trace, caller_span),
    )
    events = [event.type async for event in stream]
    assert events[-1] == "response.completed"
    spans = one_trace(otlp_receiver, caller_trace)
    gateway, lgos = the_hop(spans, caller_span)
    assert gateway.name == lgos.name == "POST /v1/responses"


async def test_no_message_content_is_on_the_gateways_spans_by_default(
    traced: AsyncOpenAI, otlp_receiver: OTLPReceiver
) -> None:
    prompt, instructions = "Tell me about tern-anchor-88", "Be brief, gannet-rule-4"
    reply = await traced.responses.create(
        model=MODEL,
        instructions=instructions,
        input=prompt,
        extra_headers=traceparent("3a" * 16, "3b" * 8),
    )
    # The echoing model quotes the prompt, so the answer is content too.
    assert "tern-anchor-88" in reply.output_text
    spans = [s for s in one_trace(otlp_receiver, "3a" * 16) if s.service == "litellm"]
    call = only(spans, "litellm", CLIENT_KIND)
    assert "gen_ai.input.messages" not in call.attributes
    assert "gen_ai.output.messages" not in call.attributes
    exported = repr([s for s in otlp_receiver.spans if s.service == "litellm"])
    assert "tern-anchor" not in exported
    assert "gannet-rule" not in exported


async def test_opting_in_puts_the_messages_on_the_gateways_model_call_span(
    gateway_config: Path, otlp_receiver: OTLPReceiver
) -> None:
    opted_in = {
        **otlp(otlp_receiver),
        "OTEL_SERVICE_NAME": "litellm-content",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    with gateway(gateway_config, opted_in, "content") as client:
        async with client:
            await client.chat.completions.create(
                model=MODEL,
                messages=[{"role": "user", "content": "Tell me about basalt-heron-27"}],
                extra_headers=traceparent("4a" * 16, "4b" * 8),
            )
        # Read while the proxy runs: its batch of spans is exported after the answer.
        spans = one_trace(otlp_receiver, "4a" * 16)
    call = only(spans, "litellm-content", CLIENT_KIND)
    # LiteLLM's shape: the OpenAI chat messages as sent and returned, as JSON strings.
    sent = json.loads(call.attributes["gen_ai.input.messages"])
    assert sent == [{"role": "user", "content": "Tell me about basalt-heron-27"}]
    [answer] = json.loads(call.attributes["gen_ai.output.messages"])
    assert answer["role"] == "assistant" and "basalt-heron-27" in answer["content"]
    # Content goes on the model-call span only.
    others = [s for s in spans if s.service == "litellm-content" and s is not call]
    assert others and "basalt-heron" not in repr(others)


async def test_without_otel_variables_the_gateway_traces_nothing(
    gateway_config: Path, otlp_receiver: OTLPReceiver
) -> None:
    """LGOS (traced) continues the caller's own span: the gateway made none and passed the
    caller's ``traceparent`` on; its responses name no span of its own (``traceresponse``)."""
    with gateway(gateway_config, {}, "untraced") as client:
        async with client:
            raw = await client.chat.completions.with_raw_response.create(
                model=MODEL,
                messages=[{"role": "user", "content": "Hello, untraced gateway"}],
                extra_headers=traceparent("5a" * 16, "5b" * 8),
            )
    assert raw.parse().choices[0].message.content
    assert "traceresponse" not in raw.headers
    spans = otlp_receiver.trace("5a" * 16, root="POST /v1/chat/completions")
    assert {s.service for s in spans} == {"lgos"}
    assert only(spans, "lgos", SERVER_KIND).parent_id == "5b" * 8
    log = (gateway_config.parent / "untraced.log").read_text()
    assert "5a" * 16 not in log
