"""The start-up benchmark keeps working: one start of the whole stack with both UIs (no restart,
to keep the tier short), each component's time to healthy and the whole ``dev-up`` printed, and
the warm goal reported. Speed is not asserted (the benchmark prints PASS or FAIL against it)."""

from __future__ import annotations

import re

from tests.support.benchmarks import run_benchmark

COMPONENTS = ("postgres", "lgos", "lgos-2", "gateway", "chainlit", "open-webui")
ROW = re.compile(r"^\| (?P<name>[\w-]+) \| (?P<seconds>[\d.]+) s \|$", re.MULTILINE)
WHOLE = re.compile(r"^\| \*\*whole `dev-up`\*\* \| (?P<seconds>[\d.]+) s \|$", re.MULTILINE)
GOAL = re.compile(
    r"^\| warm `make dev-up`, both UIs \(first start, no restart run\) \| [\d.]+ s \| ≤ 30 s \|",
    re.M,
)


def test_startup_benchmark_prints_every_component_and_the_warm_goal() -> None:
    out = run_benchmark("bench_startup", "--restarts", "0", timeout=900)
    rows = {m["name"]: float(m["seconds"]) for m in ROW.finditer(out)}
    assert set(COMPONENTS) <= set(rows), out
    whole = WHOLE.search(out)
    assert whole, out
    # No component took longer than the whole start.
    assert max(rows.values()) <= float(whole["seconds"]), out
    assert GOAL.search(out), out
