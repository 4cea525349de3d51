"""The observability overhead benchmark keeps working, on the benchmark graphs and on ChatOpenAI
over an offline-model: a tiny run prints every configuration's rows and goals, the traced
configuration's spans reached Phoenix, and the configuration whose trace exporter has nowhere
to send (Phoenix down) failed no request.

Speed is not asserted (the benchmark prints its goals as met or not); correctness is: every
request of every configuration was answered in full.
"""

from __future__ import annotations

import re

import pytest

from tests.support.benchmarks import run_benchmark

CONFIGURATIONS = ("off", "metrics", "metrics + tracing", "dead exporter", "off (A/A)")
ROW = re.compile(r"^\| (short|stream) \| (1|16) \| ([^|]+) \| .* \| (\d+) \|$", re.MULTILINE)


@pytest.mark.parametrize("graph", ["bench", "chat"])
def test_observability_benchmark_prints_each_configuration_and_no_failed_request(
    graph: str,
) -> None:
    # Generous: Phoenix's first start migrates its database, minutes on a loaded 2-core machine.
    # Two processes a configuration taking two rounds in turn: each of them serves.
    out = run_benchmark(
        "bench_observability",
        *("--seconds", "0.2", "--rounds", "2", "--processes", "2", "--graph", graph),
        timeout=1500,
    )
    rows = ROW.findall(out)
    assert sorted((w, c, name.strip()) for w, c, name, _ in rows) == sorted(
        (w, c, name) for w in ("short", "stream") for c in ("1", "16") for name in CONFIGURATIONS
    )
    # The last cell of a row is its failed requests: none, the dead exporter's included.
    assert [failed for *_, failed in rows] == ["0"] * len(rows)
    assert "| dead exporter: failed requests | 0 | 0 | yes |" in out
    served = re.search(r"^requests each process of a configuration served: (.*)$", out, re.M)
    assert served, out
    per_process = re.findall(r"(\d+)(?= / |;|$)", served.group(1))
    assert len(per_process) == 2 * len(CONFIGURATIONS) and "0" not in per_process, served.group(1)
    spans = re.search(r"spans Phoenix holds from 'metrics \+ tracing': (\d+)", out)
    assert spans and int(spans.group(1)) > 0, out
    # What one span costs, in its parts: each a positive number of microseconds.
    parts = re.findall(
        r"^\| (start, fill and end|the same, handed|OTLP encoding)[^|]*\| ([\d.]+) \|$", out, re.M
    )
    assert [name for name, _ in parts] == [
        "start, fill and end",  # the SDK's span
        "the same, handed",
        "start, fill and end",  # the lean span LGOS makes its own with
        "the same, handed",
        "OTLP encoding",  # OpenTelemetry's encoder
        "OTLP encoding",  # the one LGOS exports with
    ]
    assert all(float(micros) > 0 for _, micros in parts)
    for goal in ("metrics: req/s cost", "metrics + tracing: TTFD p50 cost", "dead exporter: req/s"):
        assert f"| {goal}" in out
