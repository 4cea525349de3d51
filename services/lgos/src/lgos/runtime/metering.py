"""One graph run's metrics and span: its outcome, its duration, its time to first text delta;
with tracing on, the ``invoke_workflow`` span its model and tool spans hang from, current while
the graph runs (so spans graph code makes, and the ``traceparent`` of its calls, are its)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import Literal, TypeVar

from langchain_core.runnables import RunnableConfig
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Span, SpanContext, StatusCode
from service_kit import metrics

from lgos.runtime.spans import SpanRecorder, start_run_span
from lgos.runtime.usage import RunObserver

Outcome = Literal["completed", "paused", "failed", "cancelled"]
#: gen_ai.operation.name of a request LGOS serves: a chat-style generation.
OPERATION = "chat"
T = TypeVar("T")


class RunMeter:
    """``with RunMeter(graph) as meter``: counted when the block ends, however it ends.

    The body sets ``outcome`` (``completed`` when it leaves it unset); an exception makes the
    run ``failed``, a cancellation or a closed stream ``cancelled``.
    """

    def __init__(
        self,
        graph: str,
        config: RunnableConfig | None = None,
        paused_in: SpanContext | None = None,
    ) -> None:
        self.graph = graph
        self.outcome: Outcome | None = None
        self._config = config
        self._paused_in = paused_in
        self._started = 0.0
        self._first_delta_seen = False
        self._span: Span | None = None
        self._context: otel_context.Context | None = None

    def __enter__(self) -> RunMeter:
        self._started = time.perf_counter()
        if self._config is not None:
            metadata = self._config.get("metadata") or {}
            span = start_run_span(self.graph, metadata.get("conversation_id"), self._paused_in)
            if span.is_recording():
                self._span = span
                recorder = SpanRecorder(span)
                callbacks = self._config.get("callbacks")
                if isinstance(callbacks, list):
                    observers = [c for c in callbacks if isinstance(c, RunObserver)]
                    if observers:  # one handler per streamed token, not two
                        observers[0].record_spans(recorder)
                    else:
                        callbacks.append(recorder)
        return self

    def _run_context(self) -> otel_context.Context | None:
        """The current context with the run span in it, made once: the streaming path makes
        it current around every event, and building it copies the context's dict."""
        if self._span is None:
            return None
        if self._context is None:
            self._context = trace.set_span_in_context(self._span)
        return self._context

    @contextmanager
    def current(self) -> Iterator[None]:
        """The run span is the current span inside the block. Only around awaits, never across
        a ``yield``: a context attached in a generator cannot be detached once the generator
        resumes in another task (or a copy of the context)."""
        context = self._run_context()
        if context is None:
            yield
            return
        token = otel_context.attach(context)
        try:
            yield
        finally:
            otel_context.detach(token)

    async def iterate(self, events: AsyncIterator[T]) -> AsyncIterator[T]:
        """``events``, each advanced with the run span current (tasks the graph starts there
        copy it), and handed on without it: the consumer's own context is left alone. Written
        out rather than through :meth:`current`: it runs once per streamed token."""
        context = self._run_context()
        if context is None:
            async for event in events:
                yield event
            return
        while True:
            token = otel_context.attach(context)
            try:
                event = await anext(events)
            except StopAsyncIteration:
                return
            finally:
                otel_context.detach(token)
            yield event

    def first_delta(self) -> None:
        if not self._first_delta_seen:
            self._first_delta_seen = True
            if metrics.enabled():
                elapsed = time.perf_counter() - self._started
                metrics.child(metrics.GENAI_TIME_TO_FIRST_TOKEN, OPERATION, self.graph).observe(
                    elapsed
                )

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
        if metrics.enabled():
            metrics.child(metrics.RUNS, self.graph, outcome).inc()
            elapsed = time.perf_counter() - self._started
            metrics.child(metrics.GENAI_REQUEST_DURATION, OPERATION, self.graph, error).observe(
                elapsed
            )
        if self._span is not None:
            if outcome == "paused":
                self._span.add_event("gen_ai.run.paused")
            if error:
                self._span.set_attribute("error.type", error)
                self._span.set_status(StatusCode.ERROR)
            self._span.set_attribute("lgos.run.outcome", outcome)
            self._span.end()
