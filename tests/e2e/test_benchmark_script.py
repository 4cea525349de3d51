"""The benchmark keeps working: a short run prints its table and every target line.

Numbers are not asserted here (targets live in the benchmarks' own output), only that the
scripts run end to end against real ``lgos serve`` (and ``lgos worker``) processes.
"""

from __future__ import annotations

import re

import pytest

from tests.support.benchmarks import run_benchmark


def test_benchmark_prints_its_table() -> None:
    out = run_benchmark("bench_serving", "--seconds", "0.3", "--profile")
    for workload in ("| short | 1 |", "| short | 64 |", "| stream | 1 |", "| stream | 64 |"):
        assert workload in out
    for target in (
        "non-streaming req/s ratio at c=64",
        "streamed deltas/s ratio at c=64",
        "added time-to-first-delta p50 at c=1",
        "server RSS idle",
    ):
        assert target in out
    # The profiled runs: each workload's server time split by component, shares summing to 100.
    assert "| component | short, c=64 | stream, c=64 |" in out
    shares = re.findall(r"^\| (.+?) \| ([\d.]+) % \| ([\d.]+) % \|$", out, re.MULTILINE)
    components = {name for name, _, _ in shares}
    assert {"LGOS", "graph (LangGraph, LangChain, the fake model)"} <= components
    for column in (1, 2):
        assert abs(sum(float(row[column]) for row in shares) - 100) < 1


def test_advanced_graph_benchmark_prints_each_path() -> None:
    out = run_benchmark("bench_advanced", "--runs", "2")
    assert "| path | in-process p50 / p99 ms | LGOS p50 / p99 ms | LGOS / in-process p50 |" in out
    for path in ("| chat |", "| research |", "| save → approve |"):
        assert path in out


def test_queue_benchmark_prints_latency_and_throughput() -> None:
    out = run_benchmark("bench_queue", "--jobs", "20", "--sequential", "5")
    assert "| 1 |" in out
    assert "| 2 |" in out
    assert "queue latency (create → in_progress) p50 idle:" in out
    assert "jobs/s 2 workers / 1 worker:" in out


@pytest.mark.parametrize(
    ("graph", "described"),
    [
        ("bench", "fake-model benchmark graphs, 200-chunk stream"),
        ("simple-graph", "the demo's simple-graph on offline-model, "),
    ],
)
def test_gateway_benchmark_prints_direct_and_gateway_rows(graph: str, described: str) -> None:
    out = run_benchmark("bench_gateway", "--seconds", "0.2", "--rounds", "1", "--graph", graph)
    assert described in out
    assert "load average (1 min) during the run:" in out
    for workload in ("short", "stream"):
        for concurrency in (1, 16):
            for target in ("direct", "gateway"):
                assert f"| {workload} | {concurrency} | {target} |" in out
