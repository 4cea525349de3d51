"""The instruction count's verdict: the benchmark's cost goals checked against the counts."""

from __future__ import annotations

from scripts.count_tracing_instructions import goal_rows


def test_each_counted_configuration_is_held_to_its_goal() -> None:
    rows = goal_rows({"off": 5.0e6, "metrics": 5.09e6, "noproc": 5.1e6, "traced": 5.26e6})
    assert rows == [
        ("metrics: instructions per request", "+1.8 %", "≤ 2 %", True),
        ("tracing: instructions per request", "+5.2 %", "≤ 5 %", False),
    ]


def test_only_what_was_counted_is_judged() -> None:
    assert goal_rows({"off": 5.0e6, "noproc": 5.1e6}) == []
    assert goal_rows({"off": 5.0e6, "traced": 5.25e6}) == [
        ("tracing: instructions per request", "+5.0 %", "≤ 5 %", True)
    ]
