"""An opt-in event-loop lag probe (``LGOS_LOOP_LAG_INTERVAL``; off by default).

A small task sleeps ``interval`` seconds again and again; how much later than asked it wakes is
the loop's lag: the time a ready callback (a request, a token) waited behind other work. Every
``report_every`` seconds one ``event loop lag`` log line gives the window's sample count, p50,
p99 and max in milliseconds, so load benchmarks (and operators) can read it from the log.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field

logger = logging.getLogger("lgos.loop_lag")


@dataclass
class LagWindow:
    """The lag samples (seconds) of one report window."""

    samples: list[float] = field(default_factory=list)

    def add(self, lag: float) -> None:
        self.samples.append(max(0.0, lag))

    def summary(self) -> dict[str, float | int]:
        ordered = sorted(self.samples)
        if not ordered:
            return {"samples": 0}

        def at(q: float) -> float:
            return round(ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000, 2)

        return {"samples": len(ordered), "p50_ms": at(0.5), "p99_ms": at(0.99), "max_ms": at(1.0)}


async def probe_loop_lag(interval: float, report_every: float) -> None:
    """Measure and log the loop's lag until cancelled."""
    # perf_counter, not loop.time(): uvloop's clock has millisecond resolution.
    window = LagWindow()
    window_started = time.perf_counter()
    while True:
        asked = time.perf_counter()
        await asyncio.sleep(interval)
        woke = time.perf_counter()
        window.add(woke - asked - interval)
        if woke - window_started >= report_every:
            logger.info("event loop lag", extra=window.summary())
            window = LagWindow()
            window_started = woke
