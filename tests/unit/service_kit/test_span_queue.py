"""A full span queue drops as OpenTelemetry's batch processor drops (the oldest span makes way)
but says so once a minute, not with a log record per span; below the bound it queues as the SDK's
does (sampled spans only, a full batch waking the exporter)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence

import pytest
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, TraceFlags
from service_kit.lean_spans import LeanTracer
from service_kit.span_queue import QuietBatchSpanProcessor


class Held(SpanExporter):
    """An exporter stuck until released, as one posting to a backend that does not answer."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = threading.Event()
        self.names: list[str] = []

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.entered.set()
        self.release.wait(10)
        self.names += [span.name for span in spans]
        return SpanExportResult.SUCCESS


def survivors(processor: type[BatchSpanProcessor]) -> list[str]:
    exporter = Held()
    provider = TracerProvider()
    provider.add_span_processor(
        processor(exporter, max_queue_size=4, max_export_batch_size=2, schedule_delay_millis=10)
    )
    tracer = LeanTracer("t", provider)
    tracer.start_span("first").end()
    tracer.start_span("second").end()
    assert exporter.entered.wait(5)  # the worker took a batch and hangs in the exporter
    for number in range(20):
        tracer.start_span(f"span {number}").end()
    exporter.release.set()
    provider.force_flush()
    provider.shutdown()
    return exporter.names


def test_a_full_queue_drops_the_oldest_spans_as_the_sdks_processor_does(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    expected = survivors(BatchSpanProcessor)
    caplog.clear()
    assert survivors(QuietBatchSpanProcessor) == expected
    assert expected[-4:] == ["span 16", "span 17", "span 18", "span 19"]
    assert not [r for r in caplog.records if r.getMessage().startswith("Queue full")]
    [warning] = [r for r in caplog.records if r.name == "service_kit.tracing"]
    assert warning.getMessage() == "span queue full: the oldest spans were dropped"
    assert warning.__dict__["dropped"] == 1  # the first drop warns; the next 15 wait a minute


def test_drops_are_counted_between_warnings(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING)
    exporter = Held()
    processor = QuietBatchSpanProcessor(
        exporter, max_queue_size=2, max_export_batch_size=2, schedule_delay_millis=10, warn_every=0
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = LeanTracer("t", provider)
    tracer.start_span("a").end()
    tracer.start_span("b").end()
    assert exporter.entered.wait(5)
    for _ in range(3):
        tracer.start_span("c").end()
        tracer.start_span("d").end()
    exporter.release.set()
    provider.shutdown()
    counts = [r.__dict__["dropped"] for r in caplog.records if r.name == "service_kit.tracing"]
    assert sum(counts) == 4 and processor.dropped == 0  # six spans, room for two


def test_a_full_batch_wakes_the_exporter_and_only_sampled_spans_are_queued() -> None:
    exporter = InMemorySpanExporter()
    # A minute between scheduled exports: only a full batch can send these spans in time.
    processor = QuietBatchSpanProcessor(
        exporter, max_queue_size=8, max_export_batch_size=3, schedule_delay_millis=60_000
    )
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = LeanTracer("t", provider)
    unsampled = SpanContext(1, 2, is_remote=False, trace_flags=TraceFlags(TraceFlags.DEFAULT))
    processor.on_end(ReadableSpan("unsampled", context=unsampled))
    for name in ("a", "b", "c"):
        tracer.start_span(name).end()
    deadline = time.monotonic() + 5
    while len(exporter.get_finished_spans()) < 3 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert [span.name for span in exporter.get_finished_spans()] == ["a", "b", "c"]
    processor.shutdown()
    tracer.start_span("after shutdown").end()  # ignored, as by the SDK's processor
    assert len(exporter.get_finished_spans()) == 3
