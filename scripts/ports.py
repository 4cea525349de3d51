"""Free TCP ports for the benchmarks and the tests' private servers (one picker for both).

``tests.support.servers`` re-exports ``free_port``; scripts import it from here, as scripts never
import ``tests``.
"""

from __future__ import annotations

import os
import random
import socket
import time

# Ports are drawn below the kernel's ephemeral range (32768+ on Linux): a port the kernel hands
# out for bind(0) is released at once and can be handed out again on the next call, or taken by
# an outgoing connection, before the server that was meant to get it binds.
_PORT_RANGE = (20000, 32000)
_handed_out: set[int] = set()
_rng = random.Random(os.getpid() ^ time.monotonic_ns())


def free_port() -> int:
    """A port nothing listens on and no earlier call in this process returned."""
    for _ in range(1000):
        port = _rng.randrange(*_PORT_RANGE)
        if port in _handed_out:
            continue
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise RuntimeError("no free port found")
