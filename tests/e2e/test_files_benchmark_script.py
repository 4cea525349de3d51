"""The Files benchmark keeps working: a short run prints its table and every target line.

Numbers are not asserted (they are the benchmark's output), only that it runs end to end against a
real ``files-service`` process.
"""

from __future__ import annotations

import os
import subprocess
import sys

from tests.support.files import SERVER_URI
from tests.support.servers import ROOT


def test_files_benchmark_prints_its_table() -> None:
    args = ["--sizes", "1,2", "--repeat", "1", "--chunks", "100", "--searches", "20"]
    result = subprocess.run(
        [sys.executable, "-m", "scripts.bench_files", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
        env={**os.environ, "FILES_BENCH_POSTGRES_URI": SERVER_URI},
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "| size MB | upload MB/s | download MB/s | local copy MB/s |" in out
    assert "| 1 |" in out and "| 2 |" in out
    for target in (
        "search over 100 chunks",
        "search latency p50",
        "search latency p99",
        "server RSS idle",
        "peak RSS growth",
    ):
        assert target in out
