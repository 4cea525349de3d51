"""A FAKE Langfuse: only its OpenTelemetry ingestion endpoint, as documented. Not Langfuse.

No Langfuse server runs on this project's machines (it needs ClickHouse, Redis, PostgreSQL and
object storage besides its own web and worker containers). This stand-in records the ingestion
contract Langfuse documents (langfuse.com/integrations/native/opentelemetry, and the
``opentelemetry`` operation of its public OpenAPI document) so the export can be tested:

- ``POST /api/public/otel/v1/traces`` (OTLP/HTTP under ``<base>/api/public/otel``); any other
  path answers 404, another method on it 405;
- Basic authentication, username the project's public key, password its secret key: anything
  else answers 401;
- ``Content-Type: application/x-protobuf`` (binary protobuf) or ``application/json`` (OTLP's
  JSON protobuf encoding); anything else answers 400;
- ``x-langfuse-ingestion-version: 4``, which Langfuse asks direct OpenTelemetry exporters to
  send. Langfuse itself still accepts a request without it (on its older, delayed path); this
  stand-in refuses one with 400, holding the export to what Langfuse asks for;
- an accepted request answers 200 with an (empty) ``ExportTraceServiceResponse``.

Langfuse reads a span's ``langfuse.session.id`` (or ``session.id``) as the session of its trace
(the property mapping on the same page); the stand-in only decodes and keeps the spans and the
headers of each request. ``delay`` makes it a slow Langfuse: each answer waits that long.
Not product code: tests only.
"""

from __future__ import annotations

import base64
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.support.otlp_receiver import ReceivedSpan, decode_spans

TRACES_PATH = "/api/public/otel/v1/traces"
JSON = "application/json"
CONTENT_TYPES = ("application/x-protobuf", JSON)


@dataclass(frozen=True)
class Attempt:
    """One request the stand-in answered: its status and headers (lower-case names)."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)


class LangfuseIngestion:
    def __init__(self, public_key: str, secret_key: str, *, delay: float = 0.0) -> None:
        self.spans: list[ReceivedSpan] = []
        self.attempts: list[Attempt] = []
        self._lock = threading.Lock()
        expected = base64.b64encode(f"{public_key}:{secret_key}".encode()).decode()
        ingestion = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, status: int, body: bytes = b"", kind: str = JSON) -> None:
                with ingestion._lock:
                    ingestion.attempts.append(
                        Attempt(status, {k.lower(): v for k, v in self.headers.items()})
                    )
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:
                self._answer(405 if self.path == TRACES_PATH else 404, b'{"message":"no"}')

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                if delay:
                    time.sleep(delay)
                if self.path != TRACES_PATH:
                    return self._answer(404, b'{"message":"Not found"}')
                if self.headers.get("Authorization") != f"Basic {expected}":
                    return self._answer(401, b'{"message":"Invalid credentials"}')
                kind = (self.headers.get("Content-Type") or "").split(";")[0].strip().lower()
                if kind not in CONTENT_TYPES:
                    return self._answer(400, b'{"message":"Unsupported content type"}')
                if self.headers.get("x-langfuse-ingestion-version") != "4":
                    return self._answer(400, b'{"message":"x-langfuse-ingestion-version: 4"}')
                request = ExportTraceServiceRequest()
                try:
                    if kind == JSON:
                        json_format.Parse(body, request)
                    else:
                        request.ParseFromString(body)
                except Exception:
                    return self._answer(400, b'{"message":"Invalid OTLP body"}')
                ingestion._add(request)
                reply = ExportTraceServiceResponse().SerializeToString()
                return self._answer(200, reply, "application/x-protobuf")

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def _add(self, request: ExportTraceServiceRequest) -> None:
        received = decode_spans(request)
        with self._lock:
            self.spans.extend(received)

    def received(self) -> list[ReceivedSpan]:
        with self._lock:
            return list(self.spans)

    def answered(self) -> list[Attempt]:
        with self._lock:
            return list(self.attempts)

    def wait_for(self, count: int, root: str, timeout: float = 30.0) -> list[ReceivedSpan]:
        """The spans received once ``count`` spans named ``root`` (each ends its trace) are in."""
        deadline = time.monotonic() + timeout
        while True:
            spans = self.received()
            if sum(s.name == root for s in spans) >= count or time.monotonic() > deadline:
                return spans
            time.sleep(0.1)

    def __enter__(self) -> LangfuseIngestion:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
