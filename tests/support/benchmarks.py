"""Running a benchmark script as a user would, for the tests that keep the scripts working."""

from __future__ import annotations

import subprocess
import sys

from tests.support.servers import ROOT


def run_benchmark(script: str, *args: str, timeout: float = 300) -> str:
    """``python -m scripts.<script> ARGS`` from the repository root; its output, once it passed."""
    result = subprocess.run(
        [sys.executable, "-m", f"scripts.{script}", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout
