"""The benchmarks' one percentile rule: nearest rank round(q * (n - 1)), in milliseconds."""

from __future__ import annotations

import math

from lgos_stack.bench.stats import percentile_ms


def test_nearest_rank_in_milliseconds() -> None:
    values = [i / 1000 for i in range(100, 0, -1)]  # 0.001 .. 0.100 s, unsorted
    assert percentile_ms(values, 0.5) == 51.0  # rank round(49.5) = 50 (half to even)
    assert percentile_ms(values, 0.99) == 99.0
    assert percentile_ms(values, 1.0) == 100.0
    assert percentile_ms(values, 0.0) == 1.0
    assert percentile_ms([0.25], 0.99) == 250.0


def test_no_values_is_nan() -> None:
    assert math.isnan(percentile_ms([], 0.5))
