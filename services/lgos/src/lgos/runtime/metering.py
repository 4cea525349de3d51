"""One graph run's metrics: its outcome, its duration and its time to first text delta."""

from __future__ import annotations

import asyncio
import time
from types import TracebackType
from typing import Literal

from service_kit import metrics

Outcome = Literal["completed", "paused", "failed", "cancelled"]
#: gen_ai.operation.name of a request LGOS serves: a chat-style generation.
OPERATION = "chat"


class RunMeter:
    """``with RunMeter(graph) as meter``: counted when the block ends, however it ends.

    The body sets ``outcome`` (``completed`` when it leaves it unset); an exception makes the
    run ``failed``, a cancellation or a closed stream ``cancelled``.
    """

    def __init__(self, graph: str) -> None:
        self.graph = graph
        self.outcome: Outcome | None = None
        self._started = 0.0
        self._first_delta_seen = False

    def __enter__(self) -> RunMeter:
        self._started = time.perf_counter()
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
