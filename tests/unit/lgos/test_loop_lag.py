"""The opt-in event-loop lag probe: off by default; when on, a blocked loop shows in its report."""

from __future__ import annotations

import asyncio
import logging
import time

import pytest
from lgos.loop_lag import LagWindow, probe_loop_lag
from lgos.settings import LGOSSettings


def test_the_probe_is_off_by_default() -> None:
    assert LGOSSettings().loop_lag_interval == 0


def test_a_window_sums_up_its_samples_in_milliseconds() -> None:
    window = LagWindow()
    for lag in [0.001] * 98 + [0.030, 0.050]:
        window.add(lag)
    window.add(-0.0005)  # a timer firing a hair early is no negative lag
    assert window.summary() == {"samples": 101, "p50_ms": 1.0, "p99_ms": 30.0, "max_ms": 50.0}
    assert LagWindow().summary() == {"samples": 0}


async def test_a_blocking_callback_shows_as_lag(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="lgos.loop_lag")
    probe = asyncio.create_task(probe_loop_lag(0.01, 0.2))
    await asyncio.sleep(0.05)
    time.sleep(0.12)  # noqa: ASYNC251 - blocks the loop on purpose, as CPU-bound work would
    await asyncio.sleep(0.3)
    probe.cancel()
    reports = [r for r in caplog.records if r.getMessage() == "event loop lag"]
    assert reports
    assert max(r.__dict__["max_ms"] for r in reports) >= 100
