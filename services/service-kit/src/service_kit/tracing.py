"""OpenTelemetry traces: set up from the standard ``OTEL_*`` variables (and, for LGOS, the
Langfuse SDK's ``LANGFUSE_*``), off when unset.

:func:`configure_tracing` installs an SDK tracer provider exporting over OTLP/HTTP when
``OTEL_EXPORTER_OTLP_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` is set (and neither
``OTEL_SDK_DISABLED=true`` nor ``OTEL_TRACES_EXPORTER=none``); the exporter reads its own
variables (headers, timeout, protocol details). A caller that asks for Langfuse also exports to
Langfuse when its keys are set (:mod:`service_kit.langfuse`), with or without an OTLP endpoint.
Without either, OpenTelemetry's API is a no-op: the W3C ``traceparent`` a caller sent is still
passed on unchanged.

GenAI span and attribute names live here, in one place (the conventions are "Development").
Message content is not recorded unless the standard opt-in
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says so (:func:`capture_message_content`).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from fastapi.telemetry import TelemetryConfig
from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind, StatusCode, Tracer
from opentelemetry.util.types import AttributeValue

from service_kit.lean_spans import LeanTracer

INSTRUMENTATION = "lgos"
OPERATION = "gen_ai.operation.name"
PROVIDER = "gen_ai.provider.name"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
RESPONSE_ID = "gen_ai.response.id"
FINISH_REASONS = "gen_ai.response.finish_reasons"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
TOOL_TYPE = "gen_ai.tool.type"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
#: The opt-in's values that put content on spans (``true``, or the newer instrumentations'
#: span modes); anything else, and unset, records none.
CAPTURE_ON = frozenset({"true", "span_only", "span_and_event"})


#: FastAPI's own telemetry, off: :mod:`service_kit.request_context` makes the one server span
#: (outside every middleware, so 401s and unhandled 500s are traced too) and :mod:`service_kit`
#: configures the exporter; FastAPI would add a second server span and per-dependency spans.
FASTAPI_TELEMETRY: TelemetryConfig = {
    "tracing": False,
    "metrics": False,
    "logs": False,
    "operation_spans": False,
    "auto_configure": False,
}


def disabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get("OTEL_SDK_DISABLED", "").strip().lower() == "true"


def exporter_configured(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether ``environ`` (this process's by default) turns trace export on."""
    if disabled(environ):
        return False
    if environ.get("OTEL_TRACES_EXPORTER", "otlp").strip().lower() == "none":
        return False
    return any(
        environ.get(name)
        for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")
    )


def configure_tracing(service: str, *, langfuse: bool = False) -> bool:
    """Export this process's spans over OTLP when the environment says where and, with
    ``langfuse``, to Langfuse when ``LANGFUSE_*`` holds its keys (:mod:`service_kit.langfuse`;
    raises its ``LangfuseSettingsError`` on invalid ones); returns whether it exports at all.
    ``OTEL_SERVICE_NAME`` wins over ``service``; ``OTEL_SDK_DISABLED=true`` turns both off."""
    from service_kit import langfuse as langfuse_export

    otlp = exporter_configured()
    to_langfuse = langfuse_export.settings() if langfuse and not disabled() else None
    if to_langfuse is not None and not to_langfuse.enabled:
        to_langfuse = None
    if not otlp and to_langfuse is None:
        return False
    from opentelemetry.sdk.resources import SERVICE_NAME, Resource
    from opentelemetry.sdk.trace import TracerProvider

    attributes = {} if os.environ.get("OTEL_SERVICE_NAME") else {SERVICE_NAME: service}
    provider = TracerProvider(resource=Resource.create(attributes))
    if to_langfuse is not None:
        langfuse_export.install(provider, to_langfuse)
    if otlp:
        from service_kit.otlp_export import OTLPSpanExporter
        from service_kit.span_queue import QuietBatchSpanProcessor

        provider.add_span_processor(QuietBatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)
    return True


def capture_message_content(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether chat spans carry the messages sent and received (off unless opted in)."""
    value = environ.get("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "")
    return value.strip().lower() in CAPTURE_ON


_TRACER = LeanTracer(INSTRUMENTATION)
"""First-party spans, made leaner than the SDK's own (:mod:`service_kit.lean_spans`); it follows
the provider :func:`configure_tracing` (or a test) installs."""


def tracer() -> Tracer:
    return _TRACER


def error_type(error: Exception) -> str:
    return type(error).__name__


@contextmanager
def current_span(
    name: str,
    kind: SpanKind,
    attributes: Mapping[str, AttributeValue],
    errors: Callable[[Exception], str] = error_type,
) -> Iterator[Span]:
    """A span current while the block runs; an exception leaving it sets ``error.type`` (named
    by ``errors``) and an error status, never the exception's message, which may hold content."""
    with tracer().start_as_current_span(
        name,
        kind=kind,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            yield span
        except Exception as error:
            span.set_attribute("error.type", errors(error))
            span.set_status(StatusCode.ERROR)
            raise


def hex_trace_id(span: trace.Span) -> str | None:
    context = span.get_span_context()
    # The tuple's items: SpanContext's properties are each a call.
    return format(context[0], "032x") if context[5] else None
