"""The benchmarks' report tables, printed as Markdown."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    name: str
    measured: str
    goal: str
    ok: bool


def print_checks(checks: list[Check]) -> bool:
    print("\n| target | measured | goal | result |\n|---|---|---|---|")
    for check in checks:
        print(
            f"| {check.name} | {check.measured} | {check.goal} | {'PASS' if check.ok else 'FAIL'} |"
        )
    return all(c.ok for c in checks)
