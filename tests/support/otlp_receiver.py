"""A TEST OTLP/HTTP TRACE RECEIVER: what a collector (or Phoenix) would receive, kept in memory.

Processes under test export with the real OpenTelemetry SDK and OTLP exporter, configured only by
``OTEL_EXPORTER_OTLP_ENDPOINT``; this decodes each ``POST /v1/traces`` (protobuf) with the
OTLP protocol's own message classes. Not product code: tests only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import AnyValue


@dataclass(frozen=True)
class ReceivedSpan:
    service: str
    name: str
    trace_id: str
    span_id: str
    parent_id: str
    kind: int
    attributes: dict[str, Any] = field(default_factory=dict)
    events: tuple[str, ...] = ()
    event_attributes: tuple[dict[str, Any], ...] = ()
    links: tuple[ReceivedLink, ...] = ()


@dataclass(frozen=True)
class ReceivedLink:
    trace_id: str
    span_id: str
    attributes: dict[str, Any] = field(default_factory=dict)


def _value(value: AnyValue) -> Any:
    kind = value.WhichOneof("value")
    if kind == "array_value":
        return [_value(v) for v in value.array_value.values]
    return getattr(value, kind) if kind else None


def decode_spans(request: ExportTraceServiceRequest) -> list[ReceivedSpan]:
    """The spans of one OTLP export request, each with its resource's ``service.name``."""
    found = []
    for resource_spans in request.resource_spans:
        resource = {a.key: _value(a.value) for a in resource_spans.resource.attributes}
        for scope_spans in resource_spans.scope_spans:
            for span in scope_spans.spans:
                found.append(
                    ReceivedSpan(
                        service=str(resource.get("service.name")),
                        name=span.name,
                        trace_id=span.trace_id.hex(),
                        span_id=span.span_id.hex(),
                        parent_id=span.parent_span_id.hex(),
                        kind=span.kind,
                        attributes={a.key: _value(a.value) for a in span.attributes},
                        events=tuple(e.name for e in span.events),
                        event_attributes=tuple(
                            {a.key: _value(a.value) for a in e.attributes} for e in span.events
                        ),
                        links=tuple(
                            ReceivedLink(
                                link.trace_id.hex(),
                                link.span_id.hex(),
                                {a.key: _value(a.value) for a in link.attributes},
                            )
                            for link in span.links
                        ),
                    )
                )
    return found


class OTLPReceiver:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.status = 200
        """What it answers; any other status refuses the batch unread."""
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if receiver.status != 200:
                    self.send_response(receiver.status)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = ExportTraceServiceRequest()
                request.ParseFromString(body)
                receiver._add(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _add(self, request: ExportTraceServiceRequest) -> None:
        received = decode_spans(request)
        with self._lock:
            self.spans.extend(received)

    def trace(self, trace_id: str, *, root: str, timeout: float = 30.0) -> list[ReceivedSpan]:
        """The spans of ``trace_id`` once the span named ``root`` arrived (it ends last; exports
        are batched)."""
        deadline = time.monotonic() + timeout
        while True:
            with self._lock:
                found = [s for s in self.spans if s.trace_id == trace_id]
            if any(s.name == root for s in found) or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def __enter__(self) -> OTLPReceiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


@pytest.fixture(scope="module")
def otlp_receiver() -> Iterator[OTLPReceiver]:
    """One receiver per test module (a plugin of the test tree): tests tell their spans apart by
    trace id."""
    with OTLPReceiver() as running:
        yield running
