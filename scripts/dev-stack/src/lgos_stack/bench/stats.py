"""The one percentile rule every benchmark prints by."""

from __future__ import annotations

from collections.abc import Iterable


def percentile_ms(values: Iterable[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (seconds), in milliseconds: the sample at rank
    ``round(q * (n - 1))`` of the sorted values (so p50 of an even count is the upper middle);
    NaN when there are none."""
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] * 1000
