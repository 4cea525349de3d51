"""``lgos serve --workers N``: N processes serving one port, each with its own event loop.

The process started (the supervisor) binds the port once and runs uvicorn's multiprocess
supervisor: it spawns N server processes that accept on the shared socket, restarts one that
dies or stops answering its health ping, and on SIGTERM or SIGINT sends each a SIGTERM, so each
drains its in-flight requests and streams within the grace period, as a single process does,
before the supervisor exits. Every server process builds the app itself (a fresh interpreter:
nothing is inherited but the environment) and tunes its own collector. What one request leaves
for the next (checkpoints, run leases, background jobs) lives in PostgreSQL and Redis, which
the processes share, so any of them answers any follow-up.

``/metrics`` on the shared port answers for every process: unless the operator named a
``PROMETHEUS_MULTIPROC_DIR``, the supervisor makes a private one for the processes it spawns
(fresh, so no stale file counts) and removes it when it exits.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager

from fastapi import FastAPI
from service_kit import metrics
from service_kit.logs import configure_logging
from service_kit.serve import serve
from service_kit.tracing import configure_tracing

from lgos.app import create_app
from lgos.config import GraphFeature, GraphRegistry
from lgos.gc_tuning import tune_collector
from lgos.loader import load_registries, served
from lgos.settings import LGOSSettings

logger = logging.getLogger("lgos")

FACTORY = "lgos.workers:create_worker_app"
"""What each server process imports and calls to build its app."""
HEALTHCHECK_TIMEOUT = 60
"""Seconds a server process has to answer the supervisor's ping (a thread of its own answers,
so a busy event loop does not count) and to start: importing and building the graphs takes
seconds, several times that on a loaded machine, and uvicorn's 5 s would kill starting ones."""


class WorkersError(ValueError):
    """Settings that cannot serve from several processes (one line for the command line)."""


def check_reload(settings: LGOSSettings) -> None:
    """``--reload`` restarts one server process: it does not combine with several."""
    if settings.reload and settings.workers > 1:
        raise WorkersError("--reload serves one process: drop --workers (or LGOS_WORKERS)")


def check_background(settings: LGOSSettings, registry: GraphRegistry) -> None:
    """Background graphs need the distributed engine with several processes: an in-process job
    runs and is kept in the process that accepted it, while its follow-ups land on any."""
    if settings.workers == 1:
        return
    background = [name for name, c in registry.items() if GraphFeature.BACKGROUND in c.features]
    if background and settings.background != "distributed":
        raise WorkersError(
            f"background graphs ({background[0]}, ...) need LGOS_BACKGROUND=distributed "
            "with several workers: an in-process job is seen by one process only"
        )


def worker_environment(settings: LGOSSettings) -> dict[str, str]:
    """What the command line set, as the variables each server process reads its settings from
    (they inherit the environment, not the parsed command line)."""
    env = {"LGOS_REGISTRY": ",".join(settings.registry), "LGOS_WORKERS": str(settings.workers)}
    if settings.app_dir is not None:
        env["LGOS_APP_DIR"] = str(settings.app_dir.resolve())
    if settings.project is not None:
        env["LGOS_PROJECT"] = str(settings.project.resolve())
    return env


def serve_workers(settings: LGOSSettings, *, grace: float) -> None:
    """Serve with ``settings.workers`` processes until SIGTERM or SIGINT."""
    os.environ.update(worker_environment(settings))
    with metrics_directory() as directory:
        logger.info(
            "starting workers",
            extra={"workers": settings.workers, "port": settings.port, "metrics_dir": directory},
        )
        serve(
            FACTORY,
            factory=True,
            host=settings.host,
            port=settings.port,
            log_level=settings.log_level,
            workers=settings.workers,
            timeout_graceful_shutdown=grace,
            timeout_worker_healthcheck=HEALTHCHECK_TIMEOUT,
        )


@contextmanager
def metrics_directory() -> Iterator[str]:
    """The multiprocess metrics directory the server processes share: the operator's, or a
    private temporary one removed on exit (each process picks it up from the environment
    before it creates a metric, so it is set before any is spawned)."""
    given = metrics.multiprocess_dir()
    if given is not None:
        yield given
        return
    directory = tempfile.mkdtemp(prefix="lgos-metrics-")
    os.environ[metrics.MULTIPROC_ENV] = directory
    try:
        yield directory
    finally:
        del os.environ[metrics.MULTIPROC_ENV]
        shutil.rmtree(directory, ignore_errors=True)


def create_worker_app() -> FastAPI:
    """One server process's app, from the settings its supervisor passed in the environment."""
    settings = LGOSSettings()
    configure_logging(settings.log_level)
    configure_tracing("lgos", langfuse=True)  # the supervisor checked LANGFUSE_*
    metrics.forget_dead_processes()  # the process this one replaces may have been killed
    app = create_app(
        load_registries(*served(settings.registry, settings.app_dir, settings.project)), settings
    )
    tune_collector(settings.gc_thresholds)
    logger.info("serving", extra={"models": len(app.state.lgos.registry), "pid": os.getpid()})
    return app
