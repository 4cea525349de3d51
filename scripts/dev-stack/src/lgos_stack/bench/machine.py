"""The load generator's own process: its event loop, its open-files limit, the machine's load."""

from __future__ import annotations

import os


def load_average() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} / {five:.2f} / {fifteen:.2f}"


def install_uvloop() -> str:
    """uvloop when installed (as ``lgos serve`` runs), so the generator is no bottleneck."""
    try:
        import uvloop
    except ImportError:
        return "asyncio"
    uvloop.install()
    return "uvloop"


def raise_fd_limit(wanted: int) -> int:
    """Lift the soft open-files limit toward ``wanted`` (a stream is two sockets here)."""
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, wanted), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target
