"""The server plumbing LGOS, the Files service and offline-model share, one module per job.

- :mod:`service_kit.envelope`: the OpenAI error envelope and the response that carries it
- :mod:`service_kit.limits`: request bodies bounded while they are read (per-route limits)
- :mod:`service_kit.logs`: one JSON object a line, the shape every first-party process logs
- :mod:`service_kit.context`: the request-scoped log fields, ``X-Request-Id`` rules, and the
  headers a call to another service carries
- :mod:`service_kit.request_context`: the outermost layer (request id, server span, one
  ``request`` line, HTTP metrics)
- :mod:`service_kit.metrics`: every Prometheus metric and the ``/metrics`` exposition
- :mod:`service_kit.tracing`: OpenTelemetry set up from ``OTEL_*`` only; GenAI names
- :mod:`service_kit.lean_spans`: first-party spans made with less work than the SDK's own
- :mod:`service_kit.otlp_encoding`, :mod:`service_kit.otlp_export`: spans written straight to
  OTLP's protobuf wire format, and the OTLP/HTTP exporter that uses it
- :mod:`service_kit.span_queue`: the batch span processor, counting the spans a full queue drops
- :mod:`service_kit.langfuse`: the optional Langfuse export and its per-request sessions
- :mod:`service_kit.responses`: JSON responses encoded with orjson
- :mod:`service_kit.openapi`: a service's own OpenAPI document in place of FastAPI's
- :mod:`service_kit.settings`: setting types the services share (bind address, limits, pools)
- :mod:`service_kit.serve`: the ``--host``/``--port`` options and uvicorn run the CLIs share
- :mod:`service_kit.framing`: uvicorn's HTTP protocol answering garbled framing with an envelope

This module imports none of them, so a process that only logs (the gateway jobs) loads no
web framework.
"""
