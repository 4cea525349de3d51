"""LiteLLM callback: LGOS continues the gateway's trace, as a child of the gateway's span.

LiteLLM 1.108.7's own tracing (``LITELLM_OTEL_V2``, switched on by lgos-litellm-serve when the
``OTEL_*`` variables name an endpoint) continues a caller's W3C ``traceparent`` in its server
span but sends no trace context to the upstream. Its ``forward_traceparent_to_llm_provider``
only copies the caller's header unchanged, which would make LGOS's server span a sibling of the
gateway's instead of its child. This hook puts the gateway's current span (the request's
server span) into the upstream request's ``traceparent``/``tracestate``. With the gateway's
tracing off there is no span, and the caller's own two headers go on unchanged, as
OpenTelemetry's API passes them on in LGOS. Nothing else is forwarded (no Baggage).
Runs inside LiteLLM's own venv (.tools/litellm), via lgos_callbacks.py.
"""

from __future__ import annotations

from typing import Any

from litellm.integrations.custom_logger import CustomLogger
from opentelemetry import trace
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

HEADERS = ("traceparent", "tracestate")


def trace_headers(data: dict[str, Any]) -> dict[str, str]:
    carrier: dict[str, str] = {}
    if trace.get_current_span().get_span_context().is_valid:
        TraceContextTextMapPropagator().inject(carrier)
        return carrier
    request = data.get("proxy_server_request") or {}
    headers = request.get("headers") or {}
    return {name.lower(): str(value) for name, value in headers.items() if name.lower() in HEADERS}


def with_trace_context(data: dict[str, Any]) -> dict[str, Any]:
    headers = trace_headers(data)
    if headers:
        kept = {
            name: value
            for name, value in (data.get("extra_headers") or {}).items()
            if name.lower() not in HEADERS
        }
        data["extra_headers"] = {**kept, **headers}
    return data


class ForwardTraceContext(CustomLogger):
    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        return with_trace_context(data)


# Standalone, for measuring the hooks one by one (scripts/bench_gateway.py --hooks-share).
forward_trace_context = ForwardTraceContext()
