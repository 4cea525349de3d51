"""``lgos serve`` with a profiler switched by signals, so a profile covers the load and not the
imports and start-up: SIGUSR1 starts ``cProfile`` on the server's (event loop) thread, SIGUSR2
stops it and writes the dump to ``BENCH_PROFILE_DUMP``.

    python -m lgos_stack.bench.profiled_serve REGISTRY [lgos serve options]
"""

from __future__ import annotations

import cProfile
import os
import signal
import sys
from types import FrameType

from lgos.cli import main


def run() -> None:
    profiler = cProfile.Profile()
    dump = os.environ["BENCH_PROFILE_DUMP"]

    def start(signum: int, frame: FrameType | None) -> None:
        profiler.enable()

    def stop(signum: int, frame: FrameType | None) -> None:
        profiler.disable()
        profiler.dump_stats(f"{dump}.part")
        os.replace(f"{dump}.part", dump)  # whole once it exists

    # uvicorn takes over SIGINT and SIGTERM only; these two stay ours.
    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    main(["serve", *sys.argv[1:]])


if __name__ == "__main__":
    run()
