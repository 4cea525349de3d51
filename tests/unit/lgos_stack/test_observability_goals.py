"""The verdict on an instruction count: the benchmark's cost goals checked against it."""

from __future__ import annotations

from lgos_stack.bench.observability_goals import counted_goals


def test_each_counted_configuration_is_held_to_its_goal() -> None:
    rows = counted_goals({"off": 5.0e6, "metrics": 5.09e6, "noproc": 5.1e6, "traced": 5.26e6})
    assert rows == [
        ("metrics: instructions per request", "+1.8 %", "≤ 2 %", True),
        ("tracing: instructions per request", "+5.2 %", "≤ 5 %", False),
    ]


def test_only_what_was_counted_is_judged() -> None:
    assert counted_goals({"off": 5.0e6, "noproc": 5.1e6}) == []
    assert counted_goals({"off": 5.0e6, "traced": 5.25e6}) == [
        ("tracing: instructions per request", "+5.0 %", "≤ 5 %", True)
    ]
