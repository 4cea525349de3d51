"""OpenTelemetry's batch span processor, quiet when its queue is full.

When the exporter cannot keep up (its endpoint down: each post waits out its timeout and
back-off), the queue fills and the SDK's processor logs "Queue full" for every span it then
drops. Its duplicate filter shows one such line in twenty seconds, but every call still builds
a log record and walks the stack for its caller: ≈ 15 µs a span on the request path, three
spans a request, paid exactly while the trace backend is down. :class:`QuietBatchSpanProcessor`
drops as the SDK's does (the oldest span makes way for the new one) and counts the drops, with
one warning a minute saying how many.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.trace import TraceFlags

logger = logging.getLogger("service_kit.tracing")

WARN_EVERY = 60.0
"""Seconds between two warnings about dropped spans."""


class QuietBatchSpanProcessor(BatchSpanProcessor):
    """:class:`BatchSpanProcessor` with every ``OTEL_BSP_*`` setting; a span that finds the
    queue full is counted instead of logged."""

    def __init__(
        self, exporter: SpanExporter, *, warn_every: float = WARN_EVERY, **settings: Any
    ) -> None:
        super().__init__(exporter, **settings)
        self.warn_every = warn_every
        self.dropped = 0
        """Spans dropped since the last warning."""
        self._warned_at = -math.inf

    def on_end(self, span: ReadableSpan) -> None:
        batch = self._batch_processor
        context = span.context
        if batch._shutdown or not (context and context.trace_flags & TraceFlags.SAMPLED):
            super().on_end(span)  # the SDK's own handling: ignored, with its warning if shut down
            return
        # The SDK's emit, less its check of the process id on every span (a system call): the
        # processor's fork hook, which CPython runs in every forked child, already resets it.
        queue = batch._queue
        full = len(queue) >= batch._max_queue_size
        queue.appendleft(span)  # a bounded deque: its oldest span makes way, as the SDK's does
        if len(queue) >= batch._max_export_batch_size and not batch._worker_awaken.is_set():
            batch._worker_awaken.set()
        if full:
            self._dropped()

    def _dropped(self) -> None:
        self.dropped += 1
        now = time.monotonic()
        if now - self._warned_at >= self.warn_every:
            logger.warning(
                "span queue full: the oldest spans were dropped", extra={"dropped": self.dropped}
            )
            self._warned_at = now
            self.dropped = 0
