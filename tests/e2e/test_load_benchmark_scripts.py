"""The load and scale benchmarks keep working: a tiny run prints every phase, figure and target.

Speed and memory are not asserted (the benchmarks print PASS/FAIL against their own targets);
only that the scripts run end to end against their real processes and report each row.
"""

from __future__ import annotations

import re

from tests.support.benchmarks import run_benchmark

VERDICT = re.compile(r"\| (PASS|FAIL) \|$", re.MULTILINE)
THROUGHPUT = ("--throughput-seconds", "0.3")


def test_load_benchmark_prints_every_phase_and_target() -> None:
    out = run_benchmark(
        "bench_load",
        *("--trivial", "4", "--advanced", "3", "--gateway", "2"),
        *("--soak", "3", "--soak-clients", "4", "--settle", "0.5", "--warm", "0"),
    )
    assert "| phase | requests | completed with parity | errors " in out
    for phase in ("trivial (chat)", "advanced (", "gateway (gateway chat)", "soak ("):
        assert f"| {phase}" in out
    for kind in ("research", "save → approve", "background", "interrupt", "tools"):
        assert kind in out
    for target in ("all complete, text parity, no errors", "RSS after / before (no leak)"):
        assert out.count(target) == 4
    # Correctness, unlike speed, holds on any machine: every answer matched its reference.
    assert "| trivial: all complete, text parity, no errors | 4 / 4 | all | PASS |" in out
    assert len(VERDICT.findall(out)) == 8


def test_scale_benchmark_prints_every_figure_and_target() -> None:
    out = run_benchmark(
        "bench_scale", "--streams", "20", "--words", "5", "--probes", "3", *THROUGHPUT
    )
    for figure in (
        "streams completed / with text parity | 20 / 20 of 20",
        # lgos serve tuned its collector with the default LGOS_GC_THRESHOLDS.
        "LGOS garbage collector | thresholds (700, 10, 1000), ",
        "LGOS RSS before / all open / peak / after",
        "loop lag p99 per 1 s window, all open",
        "new-request TTFD under load p50 / p99",
        "| throughput at c=64, short answers (chat model) |",
        "| throughput at c=64, stream answers (chat model) |",
    ):
        assert figure in out
    for target in (
        "RSS per open stream",
        "event-loop lag p99 (worst 1 s window)",
        "new-request TTFD p50",
    ):
        assert f"| {target} |" in out
    assert len(VERDICT.findall(out)) == 5


def test_scale_benchmark_runs_on_two_processes_sharing_postgres_and_redis() -> None:
    out = run_benchmark(
        "bench_scale",
        "--streams",
        "20",
        "--words",
        "5",
        "--probes",
        "3",
        "--processes",
        "2",
        *THROUGHPUT,
    )
    assert "Scale of 2 LGOS processes: 20 concurrent streams" in out
    assert "streams completed / with text parity | 20 / 20 of 20" in out
    assert "| RSS per open stream |" in out and "≤ 120 KB" in out
    assert "| throughput at c=64, short answers (chat model) |" in out
    assert len(VERDICT.findall(out)) == 5
