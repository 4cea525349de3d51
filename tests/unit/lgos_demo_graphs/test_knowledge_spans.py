"""The retrieval span's opt-in attributes follow the message-content switch."""

from __future__ import annotations

import json
from contextlib import nullcontext

import pytest
from lgos_demo_graphs.advanced import knowledge_spans
from lgos_demo_graphs.advanced.knowledge import KnowledgeHit
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from service_kit import tracing

SWITCH = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
HITS = [KnowledgeHit("file-a", "a.md", "Canaries first.", 0.9)]


def searched(monkeypatch: pytest.MonkeyPatch, fails: bool = False) -> ReadableSpan:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(tracing, "tracer", lambda: provider.get_tracer("test"))
    with (
        pytest.raises(RuntimeError) if fails else nullcontext(),
        knowledge_spans.retrieval_span("http://files:3006/v1", "vs_1", 5, "canary plan") as span,
    ):
        knowledge_spans.record_documents(span, HITS)
        if fails:
            raise RuntimeError("down")
    [finished] = exporter.get_finished_spans()
    return finished


def test_no_query_or_documents_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SWITCH, raising=False)
    span = searched(monkeypatch)
    assert span.name == "retrieval vs_1"
    attributes = dict(span.attributes or {})
    assert attributes == {
        "server.address": "files",
        "server.port": 3006,
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "vs_1",
        "gen_ai.request.top_k": 5.0,
        "lgos.retrieval.documents.count": 1,
    }


def test_opted_in_the_query_and_documents_are_recorded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SWITCH, "true")
    attributes = dict(searched(monkeypatch).attributes or {})
    assert attributes["gen_ai.retrieval.query.text"] == "canary plan"
    documents = json.loads(str(attributes["gen_ai.retrieval.documents"]))
    assert documents == [{"id": "file-a", "score": 0.9}]


def test_a_failed_search_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    span = searched(monkeypatch, fails=True)
    assert (span.attributes or {})["error.type"] == "RuntimeError"
    assert not span.status.is_ok
