"""``--reload`` for authors: a supervisor that restarts a server when its Python source changes.

The server runs as a child process (the same command, told not to reload); the supervisor watches
folders for ``*.py`` changes and, on one, stops the child as a normal shutdown does (SIGTERM: the
server finishes its in-flight requests) before it starts the next one. The supervisor keeps its
pid for its whole life, so whatever started it stops it as it would stop the server itself.
"""

from __future__ import annotations

import logging
import signal
import subprocess
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import FrameType

from watchfiles import PythonFilter, watch

logger = logging.getLogger("service_kit.reload")

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def without_reload(argv: Sequence[str]) -> list[str]:
    """``argv`` without ``--reload`` (or the abbreviation argparse accepted for it)."""
    return [arg for arg in argv if not (len(arg) >= 3 and "--reload".startswith(arg))]


def supervise(
    command: Sequence[str],
    folders: Sequence[Path],
    *,
    env: Mapping[str, str],
    grace: float,
) -> int:
    """Run ``command`` until SIGINT or SIGTERM, restarted on each change of a ``*.py`` file under
    ``folders``; a child that exits by itself is started again on the next change. ``grace``:
    seconds a stopping child has before it is killed. Returns the exit status for the
    supervisor: 0 for a stop it was asked for, else the last child's."""
    stop = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stop.set()

    previous = {sig: signal.signal(sig, request_stop) for sig in STOP_SIGNALS}
    logging.getLogger("watchfiles").setLevel(logging.WARNING)  # one line a reload: ours
    child = _start(command, env)
    logger.info("watching for changes", extra={"folders": [str(f) for f in folders]})
    reported_exit = False
    try:
        # yield_on_timeout: an empty set every half second, to notice a child that exited.
        for changes in watch(
            *folders,
            watch_filter=PythonFilter(),
            stop_event=stop,
            rust_timeout=500,
            yield_on_timeout=True,
            raise_interrupt=False,
        ):
            if not changes:
                if child.poll() is not None and not reported_exit:
                    reported_exit = True
                    logger.warning(
                        "server exited; waiting for a change to start it again",
                        extra={"status": child.returncode},
                    )
                continue
            changed = sorted(path for _, path in changes)
            logger.info("reloading: changed %s", changed[0], extra={"changed": changed})
            _halt(child, grace)
            child = _start(command, env)
            reported_exit = False
    finally:
        _halt(child, grace)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    status = child.returncode
    if status < 0:  # ended by a signal: the stop asked for is a clean exit, as without --reload
        return 0 if stop.is_set() else 128 - status
    return status


def _start(command: Sequence[str], env: Mapping[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(list(command), env=dict(env))


def _halt(child: subprocess.Popen[bytes], grace: float) -> None:
    """A graceful stop (SIGTERM: uvicorn finishes in-flight requests; unlike a second SIGINT it
    never forces the exit when the child also got the SIGINT sent to its process group), then
    SIGKILL after ``grace`` seconds."""
    if child.poll() is not None:
        return
    child.send_signal(signal.SIGTERM)
    try:
        child.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        logger.warning("server did not stop in time; killed", extra={"grace_seconds": grace})
        child.kill()
        child.wait()
