"""Sampling, set by the standard ``OTEL_TRACES_SAMPLER`` variables the OpenTelemetry SDK reads:
with ``parentbased_traceidratio`` at 0, a request without a caller's trace exports no span
(still answered, still with its request id), and a caller's sampled ``traceparent`` is honoured:
that request's spans are exported in the caller's trace."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.clients import sdk_client
from tests.support.lgos_processes import api_process
from tests.support.otlp_receiver import OTLPReceiver
from tests.support.servers import Server

CALLER_TRACE = "0af7651916cd43dd8448eb211c80319c"
CALLER_SPAN = "b7ad6b7169203331"


@pytest.fixture(scope="module")
def server(
    otlp_receiver: OTLPReceiver, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    tmp = tmp_path_factory.mktemp("trace-sampling")
    env = {
        "LGOS_STATE_DIR": str(tmp),
        "OTEL_EXPORTER_OTLP_ENDPOINT": otlp_receiver.url,
        "OTEL_BSP_SCHEDULE_DELAY": "100",
        "OTEL_TRACES_SAMPLER": "parentbased_traceidratio",
        "OTEL_TRACES_SAMPLER_ARG": "0",
    }
    with api_process(env, Path(tmp) / "lgos.log") as running:
        yield running


async def test_unsampled_requests_export_nothing_and_a_sampled_caller_is_traced(
    server: Server, otlp_receiver: OTLPReceiver
) -> None:
    client = sdk_client(f"{server.url}/v1")
    for _ in range(5):
        answered = await client.responses.with_raw_response.create(model="scripted", input="hi")
        assert answered.parse().status == "completed"
        assert answered.headers["x-request-id"]
    traced = await client.responses.create(
        model="scripted",
        input="hi",
        extra_headers={"traceparent": f"00-{CALLER_TRACE}-{CALLER_SPAN}-01"},
    )
    assert traced.status == "completed"
    spans = otlp_receiver.trace(CALLER_TRACE, root="POST /v1/responses")
    assert {s.name for s in spans} >= {"POST /v1/responses", "invoke_workflow scripted"}
    await asyncio.sleep(0.5)  # a batch of the unsampled requests would have been exported by now
    assert {s.trace_id for s in otlp_receiver.spans} == {CALLER_TRACE}
