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


def test_plain_http_goes_through_urllib3_with_nothing_in_between(
    receiver: OTLPReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)
    exporter = OTLPSpanExporter(endpoint=f"{receiver.url}/v1/traces", timeout=5)
    assert exporter.lean_transport
    assert exporter.export([span("a")]) is SpanExportResult.SUCCESS
    assert [s.name for s in receiver.spans] == ["a"]
    # From the standard variables too: the traces endpoint first, then the base one.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector.example:4318")
    assert not OTLPSpanExporter().lean_transport
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", f"{receiver.url}/v1/traces")
    assert OTLPSpanExporter().lean_transport


@pytest.mark.parametrize(
    ("variable", "value", "endpoint"),
    [
        (None, None, "https://collector.example:4318/v1/traces"),
        ("HTTP_PROXY", "http://proxy.example:3128", None),
        ("all_proxy", "socks5://proxy.example:1080", None),
        ("OTEL_PYTHON_EXPORTER_OTLP_HTTP_TRACES_CREDENTIAL_PROVIDER", "vendor", None),
        ("OTEL_PYTHON_EXPORTER_OTLP_HTTP_CREDENTIAL_PROVIDER", "vendor", None),
    ],
)
def test_tls_a_proxy_or_a_credential_provider_keep_the_exporter_s_own_transport(
    monkeypatch: pytest.MonkeyPatch, variable: str | None, value: str | None, endpoint: str | None
) -> None:
    # requests reads the proxy variables, its CA bundle and the provider's session; urllib3
    # alone would not.
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
    if variable is not None and value is not None:
        monkeypatch.setenv(variable, value)
    if variable is not None and "CREDENTIAL" in variable:
        # No such provider is installed: the exporter's own loading of it refuses, which
        # shows it was asked.
        with pytest.raises(RuntimeError):
            OTLPSpanExporter(endpoint=endpoint)
        return
    assert not OTLPSpanExporter(endpoint=endpoint).lean_transport
