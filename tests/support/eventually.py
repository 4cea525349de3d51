"""Waiting for what another process does in its own time (an exporter's batch, a scrape)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def eventually(
    read: Callable[[], T | None], what: str, timeout: float = 60.0, every: float = 1.0
) -> T:
    """``read()``'s first answer that is not None, asked every ``every`` seconds; an
    AssertionError naming ``what`` after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if (found := read()) is not None:
            return found
        time.sleep(every)
    raise AssertionError(f"{what} within {timeout:.0f} s")
