"""What the benchmarks share: their graphs, a lean load client, server start-up, statistics and
report tables. The benchmarks themselves are the ``scripts/bench_*.py`` command lines."""
