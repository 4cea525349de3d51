"""Prometheus metrics every first-party server shares, and the ``/metrics`` exposition.

Every metric name lives in this module (the GenAI conventions are still moving). Names follow
the OpenTelemetry-to-Prometheus mapping: dots become underscores and the unit is a suffix, so
``gen_ai.server.request.duration`` (seconds) is ``gen_ai_server_request_duration_seconds``.

Several processes behind one port (``--workers N``, or an API and its worker on one host) report
correctly through prometheus_client's multiprocess mode: when ``PROMETHEUS_MULTIPROC_DIR`` names
a directory, each process writes its samples there and any process's ``/metrics`` answers the
sum of all (counters and histograms summed; live gauges summed over the processes still
running). The directory must be empty when the first process starts (the supervisor's job); a
process that stops removes its live gauges (:func:`mark_process_dead`), and one killed before it
could is forgotten by the next process that starts (:func:`forget_dead_processes`).

Values measured at scrape time (queue depth, backlogs) come from ``gauges`` callbacks the
service passes to :func:`exposition`: they are asked by the process answering, once per scrape,
and never written to the shared directory.

Recording can be switched off for a whole process (:func:`set_enabled`, from a service's
setting such as ``LGOS_METRICS_ENABLED``): every recording site asks :func:`enabled` first, so a
process that does not want metrics pays one flag read per site.
"""

from __future__ import annotations

import os
import re
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"

# Seconds: model-serving latencies, from a cached answer to a long research run.
LATENCY_BUCKETS = (0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300)

HTTP_REQUESTS = Counter(
    "http_server_requests",
    "HTTP requests answered, by service, method, route template and status.",
    ["service", "method", "route", "status"],
)
HTTP_DURATION = Histogram(
    "http_server_request_duration_seconds",
    "Time from the request to the end of its response (a stream's last byte).",
    ["service", "method", "route"],
    buckets=LATENCY_BUCKETS,
)
HTTP_IN_FLIGHT = Gauge(
    "http_server_active_requests",
    "Requests being answered now.",
    ["service"],
    multiprocess_mode="livesum",
)
OPEN_STREAMS = Gauge(
    "lgos_open_streams",
    "Event streams open now.",
    ["service"],
    multiprocess_mode="livesum",
)
GENAI_REQUEST_DURATION = Histogram(
    "gen_ai_server_request_duration_seconds",
    "gen_ai.server.request.duration: one model request served, start to last output.",
    ["gen_ai_operation_name", "gen_ai_request_model", "error_type"],
    buckets=LATENCY_BUCKETS,
)
GENAI_TIME_TO_FIRST_TOKEN = Histogram(
    "gen_ai_server_time_to_first_token_seconds",
    "gen_ai.server.time_to_first_token: from the start of a streamed run to its first text delta.",
    ["gen_ai_operation_name", "gen_ai_request_model"],
    buckets=LATENCY_BUCKETS,
)
RUNS = Counter(
    "lgos_runs",
    "Graph runs ended, by graph and outcome (completed, paused, failed, cancelled).",
    ["graph", "outcome"],
)
RUN_CONFLICTS = Counter(
    "lgos_run_conflicts",
    "Requests refused because another request held the run's lease or the answers were stale.",
    ["graph", "code"],
)
WORKER_UP = Gauge(
    "lgos_worker_up",
    "1 while a background worker process runs and takes jobs (0 while it drains to stop).",
    ["worker"],
    multiprocess_mode="liveall",
)
WORKER_JOBS = Counter(
    "lgos_worker_jobs",
    "Background jobs a worker ended, by outcome (finished, failed, stopped).",
    ["outcome"],
)
WORKER_RUNNING = Gauge(
    "lgos_worker_running_jobs",
    "Background jobs running in the worker processes now.",
    multiprocess_mode="livesum",
)
FILES_UPLOADS = Counter(
    "files_uploads",
    "Files uploaded, by purpose.",
    ["purpose"],
)
FILES_UPLOAD_BYTES = Counter(
    "files_upload_bytes",
    "Bytes of the files uploaded.",
)


@dataclass(frozen=True)
class Labelled:
    """A scrape-time reading with one label: label value → value."""

    label: str
    values: Mapping[str, float]


#: A scrape-time reading: metric name → (help, value or labelled values).
Readings = Mapping[str, tuple[str, float | Labelled]]
GaugeSource = Callable[[], Awaitable[Readings]]


_enabled = True

M = TypeVar("M", Counter, Gauge, Histogram)
_children: dict[tuple[object, ...], Any] = {}

#: Methods a label may name; any other is ``_OTHER``, as the HTTP conventions say, so a client
#: cannot make a time series per made-up method.
_METHODS = frozenset(
    ("GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH")
)


def child(metric: M, *values: str) -> M:
    """``metric.labels(*values)``, remembered: ``labels`` converts, checks and locks on every
    call, and a request records several. The label sets here are few (routes, statuses, graphs,
    outcomes) and prometheus_client keeps every child it made anyway; nothing here removes one.
    """
    key = (metric, *values)
    found: M | None = _children.get(key)
    if found is None:
        found = _children[key] = metric.labels(*values)
    return found


def set_enabled(on: bool) -> None:
    """Record metrics in this process or not. Process-wide, like the registry they go to: the
    last setting wins when one process builds several apps."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    return _enabled


def multiprocess_dir() -> str | None:
    return os.environ.get(MULTIPROC_ENV) or None


def _registry() -> CollectorRegistry:
    if multiprocess_dir() is None:
        return REGISTRY
    registry = CollectorRegistry()
    multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    return registry


class _Readings(Collector):
    def __init__(self, readings: Readings) -> None:
        self.readings = readings

    def collect(self) -> list[GaugeMetricFamily]:
        families = []
        for name, (help_text, value) in self.readings.items():
            if isinstance(value, Labelled):
                family = GaugeMetricFamily(name, help_text, labels=[value.label])
                for label, number in sorted(value.values.items()):
                    family.add_metric([label], number)
            else:
                family = GaugeMetricFamily(name, help_text, value=value)
            families.append(family)
        return families


async def exposition(gauges: tuple[GaugeSource, ...] = ()) -> bytes:
    """The Prometheus text of every process's samples, then this scrape's readings.

    A reading that fails (its database is down) is left out; the scrape still answers.
    """
    text = generate_latest(_registry())
    readings: dict[str, tuple[str, float | Labelled]] = {}
    for source in gauges:
        try:
            readings.update(await source())
        except Exception:
            continue
    if readings:
        scrape = CollectorRegistry(auto_describe=False)
        scrape.register(_Readings(readings))
        text += generate_latest(scrape)
    return text


def mark_process_dead(pid: int | None = None) -> None:
    """Drop this process's live gauges from the shared directory (a no-op without one)."""
    directory = multiprocess_dir()
    if directory is not None:
        multiprocess.mark_process_dead(pid or os.getpid(), directory)  # type: ignore[no-untyped-call]


_LIVE_GAUGE_FILE = re.compile(r"gauge_live[a-z]+_(\d+)\.db")


def forget_dead_processes() -> set[int]:
    """Drop the live gauges of processes that are gone without :func:`mark_process_dead` (killed),
    so a stream open in a killed process does not count as open forever; their counters stay."""
    directory = multiprocess_dir()
    if directory is None:
        return set()
    dead = set()
    for name in os.listdir(directory):
        if (found := _LIVE_GAUGE_FILE.fullmatch(name)) and not _running(int(found[1])):
            dead.add(int(found[1]))
    for pid in dead:
        mark_process_dead(pid)
    return dead


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True


def record_response(
    service: str, method: str | None, route: str, status: int, seconds: float
) -> None:
    """What :mod:`service_kit.request_context` reports at the end of each request."""
    method = method if method in _METHODS else "_OTHER"
    child(HTTP_REQUESTS, service, method, route, str(status)).inc()
    child(HTTP_DURATION, service, method, route).observe(seconds)


def install_route(app: Any, gauges: tuple[GaugeSource, ...] = ()) -> None:
    """``GET /metrics`` on ``app``: no key needed, like ``/health`` (see the module doc)."""
    from starlette.responses import Response

    async def scrape() -> Response:
        return Response(await exposition(gauges), media_type=CONTENT_TYPE)

    app.add_api_route("/metrics", scrape, methods=["GET"], include_in_schema=False)
