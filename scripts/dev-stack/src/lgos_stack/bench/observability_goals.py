"""What metrics and tracing may cost a served request, and the verdict on an instruction count.

``scripts/bench_observability.py`` holds its timed runs to these goals and
``scripts/count_tracing_instructions.py`` its counts.
"""

from __future__ import annotations

from collections.abc import Mapping

METRICS_GOAL = 2.0
TRACING_GOAL = 5.0
"""Cost goals, percent of the "off" figure (throughput down, time to first delta up, or
instructions a request up)."""

#: A goal's row: what, the figure, the limit, met.
GoalRow = tuple[str, str, str, bool]


def counted_goals(per_request: Mapping[str, float]) -> list[GoalRow]:
    """The goals checked against instructions per request by configuration: metrics alone
    (``metrics``) and tracing with metrics off (``traced``, so tracing's own share), each
    against ``off``, judged as printed (one decimal)."""
    off = per_request["off"]
    rows = []
    for name, what, goal in (
        ("metrics", "metrics", METRICS_GOAL),
        ("traced", "tracing", TRACING_GOAL),
    ):
        if name in per_request:
            cost = round(100 * (per_request[name] / off - 1), 1)
            rows.append(
                (
                    f"{what}: instructions per request",
                    f"{cost:+.1f} %",
                    f"≤ {goal:g} %",
                    cost <= goal,
                )
            )
    return rows
