"""Client spans of advanced-graph's Files and vector-store calls.

The knowledge search is a GenAI ``retrieval`` span: ``retrieval <vector store id>``, with
``gen_ai.operation.name=retrieval``, ``gen_ai.data_source.id`` and ``gen_ai.request.top_k``.
The query text and the documents found (file id and score) are the conventions' opt-in
attributes: recorded only when message content capture is on
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``), since a query is what a user asked.
Reading an attachment, finding, uploading and indexing a note are spans named for the
operation (``files.read``, ``files.find_upload``, ``files.upload``, ``vector_stores.index``).

Each is a CLIENT span with ``server.address`` and ``server.port``, current during its calls,
so the calls' ``traceparent`` names it and the Files service's server spans are its children.
A failure sets ``error.type`` (the exception's name) and the error status.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from urllib.parse import urlsplit

import orjson
from opentelemetry.trace import Span, SpanKind
from opentelemetry.util.types import AttributeValue
from service_kit import tracing

from lgos_demo_graphs.advanced.knowledge import KnowledgeHit

DATA_SOURCE_ID = "gen_ai.data_source.id"
TOP_K = "gen_ai.request.top_k"
QUERY_TEXT = "gen_ai.retrieval.query.text"
DOCUMENTS = "gen_ai.retrieval.documents"
FILE_ID = "lgos.file.id"


def _server(base_url: str) -> dict[str, AttributeValue]:
    url = urlsplit(base_url)
    port = url.port or (443 if url.scheme == "https" else 80)
    return {"server.address": url.hostname or "", "server.port": port}


@contextmanager
def client_span(name: str, base_url: str, **attributes: AttributeValue) -> Iterator[Span]:
    """A CLIENT span ``name`` around calls to ``base_url``, current while they run."""
    with tracing.current_span(name, SpanKind.CLIENT, {**_server(base_url), **attributes}) as span:
        yield span


@contextmanager
def retrieval_span(base_url: str, vector_store_id: str, limit: int, query: str) -> Iterator[Span]:
    attributes: dict[str, AttributeValue] = {
        tracing.OPERATION: "retrieval",
        DATA_SOURCE_ID: vector_store_id,
        TOP_K: float(limit),
    }
    if tracing.capture_message_content():
        attributes[QUERY_TEXT] = query
    with client_span(f"retrieval {vector_store_id}", base_url, **attributes) as span:
        yield span


def record_documents(span: Span, hits: Sequence[KnowledgeHit]) -> None:
    span.set_attribute("lgos.retrieval.documents.count", len(hits))
    if tracing.capture_message_content():
        found = [{"id": hit.file_id, "score": hit.score} for hit in hits]
        span.set_attribute(DOCUMENTS, orjson.dumps(found).decode())
