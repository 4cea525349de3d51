"""The outermost layer of every first-party server: one request id and one log line a request.

:func:`install` wraps a FastAPI app's whole middleware stack (Starlette's own error layer
included), so every response carries ``X-Request-Id``: answers, errors, unhandled 500s and
event streams alike. Each request runs in a fresh log context (:mod:`service_kit.context`)
holding its request id and, when the caller sent a valid W3C ``traceparent``, its trace id.
When the response ends, one ``request`` line is logged with the method, the route template
(never the raw path or query), the status and the duration.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, StatusCode

from service_kit import context, metrics, tracing

Scope = dict[str, Any]
ASGIApp = Callable[..., Any]

logger = logging.getLogger("service_kit.requests")
_HEADER = context.REQUEST_ID_HEADER.lower().encode()


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            try:
                return bytes(value).decode("ascii")
            except UnicodeDecodeError:
                return None
    return None


def _route(scope: Scope) -> str:
    route = scope.get("route")
    path = getattr(route, "path", None)
    return path if isinstance(path, str) else "unmatched"


UNTRACED_PATH = "/metrics"
_NEW_TRACE = otel_context.Context()
"""The context a request without ``traceparent`` starts its span in: none, so a new trace."""


class RequestContext:
    """ASGI middleware: the request id in force, the fresh log context, the closing line."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        service: str | None = None,
        on_response: Callable[..., None] | None = None,
    ) -> None:
        self.app = app
        self.service = service
        self.on_response = on_response

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rid = context.accepted_request_id(_header(scope, _HEADER)) or context.new_request_id()
        carrier = {
            name: value
            for name in ("traceparent", "tracestate")
            if (value := _header(scope, name.encode())) is not None
        }
        method = str(scope.get("method", "OTHER"))
        # A metrics scrape gets no span: Prometheus asks every few seconds, and its traces
        # would bury the requests in the trace viewer.
        span = (
            trace.INVALID_SPAN
            if scope.get("path") == UNTRACED_PATH
            else tracing.tracer().start_span(
                method,
                # Without a header there is nothing to extract: a new trace, as extract gives.
                context=propagate.extract(carrier) if carrier else _NEW_TRACE,
                kind=SpanKind.SERVER,
                attributes={"http.request.method": method},
            )
        )
        status = 500
        started = time.perf_counter()
        in_flight = (
            metrics.child(metrics.HTTP_IN_FLIGHT, self.service)
            if self.service is not None and metrics.enabled()
            else None
        )
        if in_flight is not None:
            in_flight.inc()

        async def send_with_id(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
                headers = [
                    (k, v) for k, v in message.get("headers", ()) if bytes(k).lower() != _HEADER
                ]
                headers.append((_HEADER, rid.encode()))
                message = {**message, "headers": headers}
            await send(message)

        # The span is made current by hand rather than with trace.use_span, a generator-based
        # context manager that also put the exception's message in the span's status.
        token = otel_context.attach(trace.set_span_in_context(span))
        try:
            with context.fresh(request_id=rid, trace_id=tracing.hex_trace_id(span)):
                try:
                    await self.app(scope, receive, send_with_id)
                except Exception as error:
                    if span.is_recording():
                        span.set_attribute("error.type", tracing.error_type(error))
                    raise
                finally:
                    duration = time.perf_counter() - started
                    route = _route(scope)
                    if span.is_recording():
                        span.update_name(f"{method} {route}")
                        # One call: the SDK takes the span's lock once per call.
                        span.set_attributes(
                            {"http.route": route, "http.response.status_code": status}
                        )
                        if status >= 500:
                            span.set_status(StatusCode.ERROR)
                    if self.service is not None and in_flight is not None:
                        in_flight.dec()
                        metrics.record_response(
                            self.service, scope.get("method"), route, status, duration
                        )
                    logger.info(
                        "request",
                        extra={
                            "method": scope.get("method"),
                            "route": route,
                            "status": status,
                            "duration_ms": round(duration * 1000, 2),
                        },
                    )
                    if self.on_response is not None:
                        self.on_response(scope.get("method"), route, status, duration)
        finally:
            otel_context.detach(token)
            span.end()


def install(
    app: Any, *, service: str | None = None, on_response: Callable[..., None] | None = None
) -> None:
    """Make :class:`RequestContext` the outermost layer of ``app`` (a FastAPI/Starlette app).

    With ``service``, requests are counted in :mod:`service_kit.metrics` under that name.
    ``on_response(method, route, status, seconds)`` is called once per finished request.
    """
    build = app.build_middleware_stack

    def build_with_context() -> ASGIApp:
        return RequestContext(build(), service=service, on_response=on_response)

    app.build_middleware_stack = build_with_context
