"""The OTLP/HTTP exporter with the lean encoder, against a real HTTP receiver: what it posts
decodes as an OTLP trace request; a refused batch, nothing listening or a span it cannot encode
is a failed export, never an exception in the batch processor's thread."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from lgos_stack.ports import free_port
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanContext
from service_kit.otlp_export import OTLPSpanExporter

from tests.support.otlp_receiver import OTLPReceiver


@pytest.fixture
def receiver() -> Iterator[OTLPReceiver]:
    with OTLPReceiver() as receiver:
        yield receiver


def span(name: str) -> ReadableSpan:
    return ReadableSpan(
        name=name,
        context=SpanContext(7, 9, is_remote=False),
        resource=Resource({"service.name": "lgos-test"}),
        attributes={"gen_ai.operation.name": "chat"},
    )


def test_a_batch_is_posted_as_an_otlp_trace_request(receiver: OTLPReceiver) -> None:
    exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", timeout=5)
    assert exporter.export([span("a"), span("b")]) is SpanExportResult.SUCCESS
    assert [(s.service, s.name, s.attributes) for s in receiver.spans] == [
        ("lgos-test", name, {"gen_ai.operation.name": "chat"}) for name in ("a", "b")
    ]
    exporter.shutdown()
    assert exporter.export([span("late")]) is SpanExportResult.FAILURE
    assert len(receiver.spans) == 2


def test_a_refused_batch_fails_the_export(receiver: OTLPReceiver) -> None:
    receiver.status = 400  # not retried: the batch is dropped
    exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", timeout=5)
    assert exporter.export([span("a")]) is SpanExportResult.FAILURE


def test_nothing_listening_fails_the_export_without_raising() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1/traces"
    assert OTLPSpanExporter(endpoint=url, timeout=1).export([span("a")]) is SpanExportResult.FAILURE


def test_a_batch_it_cannot_encode_fails_the_export(receiver: OTLPReceiver) -> None:
    broken = span("a")
    broken._name = None  # type: ignore[assignment]  # no SDK span has this: the encoder raises
    exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", timeout=5)
    assert exporter.export([broken]) is SpanExportResult.FAILURE
    assert receiver.spans == []
