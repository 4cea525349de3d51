"""OpenTelemetry's OTLP/HTTP span exporter with :mod:`service_kit.otlp_encoding`'s encoder.

Everything else is the exporter's own: the endpoint, headers, timeout, compression and TLS it
reads from the standard ``OTEL_EXPORTER_OTLP_*`` variables, its retries with back-off, its
session. Only the encoding of a batch changes, which runs in the batch processor's thread while
requests are served.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as _OTLPSpanExporter,
)
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExportResult

from service_kit.otlp_encoding import encode_spans

logger = logging.getLogger("service_kit.tracing")


class OTLPSpanExporter(_OTLPSpanExporter):
    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if self._shutdown:
            return SpanExportResult.FAILURE
        try:
            data = encode_spans(spans)
        except Exception as error:  # an exporter must never raise into the processor
            logger.error("span batch not encoded", extra={"error": type(error).__name__})
            return SpanExportResult.FAILURE
        sent = self._client.export(data)
        return SpanExportResult.SUCCESS if sent.success else SpanExportResult.FAILURE
