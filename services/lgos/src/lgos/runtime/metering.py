"""One graph run's metrics and span: its outcome, its duration, its time to first text delta;
with tracing on, the ``invoke_workflow`` span its model and tool spans hang from."""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import Literal

from langchain_core.runnables import RunnableConfig
from opentelemetry.trace import Span, StatusCode
from service_kit import metrics

from lgos.runtime.spans import SpanRecorder, start_run_span

Outcome = Literal["completed", "paused", "failed", "cancelled"]
#: gen_ai.operation.name of a request LGOS serves: a chat-style generation.
OPERATION = "chat"


class RunMeter:
    """``with RunMeter(graph) as meter``: counted when the block ends, however it ends.

    The body sets ``outcome`` (``completed`` when it leaves it unset); an exception makes the
    run ``failed``, a cancellation or a closed stream ``cancelled``.
    """

    def __init__(self, graph: str, config: RunnableConfig | None = None) -> None:
        self.graph = graph
        self.outcome: Outcome | None = None
        self._config = config
        self._started = 0.0
        self._first_delta_seen = False
        self._span: Span | None = None

    def __enter__(self) -> RunMeter:
        self._started = time.perf_counter()
        if self._config is not None:
            metadata = self._config.get("metadata") or {}
            span = start_run_span(self.graph, metadata.get("conversation_id"))
            if span.is_recording():
                self._span = span
                callbacks = self._config.get("callbacks")
                if isinstance(callbacks, list):
                    callbacks.append(SpanRecorder(span))
        return self

    def first_delta(self) -> None:
        if not self._first_delta_seen:
            self._first_delta_seen = True
            elapsed = time.perf_counter() - self._started
            metrics.GENAI_TIME_TO_FIRST_TOKEN.labels(OPERATION, self.graph).observe(elapsed)

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        error = ""
        outcome: Outcome = self.outcome or "completed"
        if kind is not None:
            cancelled = issubclass(kind, (asyncio.CancelledError, GeneratorExit))
            outcome = "cancelled" if cancelled else "failed"
            error = "cancelled" if cancelled else kind.__name__
        metrics.RUNS.labels(self.graph, outcome).inc()
        elapsed = time.perf_counter() - self._started
        metrics.GENAI_REQUEST_DURATION.labels(OPERATION, self.graph, error).observe(elapsed)
        if self._span is not None:
            if outcome == "paused":
                self._span.add_event("gen_ai.run.paused")
            if error:
                self._span.set_attribute("error.type", error)
                self._span.set_status(StatusCode.ERROR)
            self._span.set_attribute("lgos.run.outcome", outcome)
            self._span.end()
