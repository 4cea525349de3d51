"""``/metrics`` after real SDK traffic: two ``lgos serve`` processes sharing one multiprocess
directory (either answers for both), a worker with its own, and the Files service.

Real processes on PostgreSQL and Redis; the numbers are read with prometheus_client's own
parser and compared with the traffic the test sent.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import openai
import pytest
import redis
from openai import AsyncOpenAI
from prometheus_client import CollectorRegistry
from prometheus_client.multiprocess import MultiProcessCollector
from prometheus_client.parser import text_string_to_metric_families

from tests.support.files import API_KEY, FilesProcess, files_client, files_service
from tests.support.interrupts import answer
from tests.support.lgos_processes import api_process, worker_process
from tests.support.servers import Server
from tests.support.shared_state import REDIS_URL, shared_env

# Seconds a process may take to start: several start at once, on a machine the other tiers load.
START = 120.0
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(server: Server) -> Samples:
    response = httpx.get(f"{server.url}/metrics", timeout=10)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain; version=0.0.4")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """The sum of ``name``'s samples whose labels include ``labels`` (0 when none)."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("metrics")


@pytest.fixture(scope="module")
def env(postgres_uri: str, offline_model: Server, state: Path) -> Iterator[dict[str, str]]:
    queue = f"lgos-test-metrics:{uuid.uuid4().hex[:8]}"
    (state / "api-metrics").mkdir()
    yield {
        **shared_env(postgres_uri, offline_model, state, 5.0),
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": queue,
        "PROMETHEUS_MULTIPROC_DIR": str(state / "api-metrics"),
        "DEMO_API_REPORT_STEP_SECONDS": "0.05",
    }
    redis.Redis.from_url(REDIS_URL).delete(queue)


@pytest.fixture(scope="module")
def two_apis(env: dict[str, str], state: Path) -> Iterator[tuple[Server, Server]]:
    with (
        api_process(env, state / "a.log", timeout=START) as a,
        api_process(env, state / "b.log", timeout=START) as b,
    ):
        yield a, b


@pytest.fixture
async def sdks(two_apis: tuple[Server, Server]) -> AsyncIterator[tuple[AsyncOpenAI, AsyncOpenAI]]:
    a, b = two_apis
    async with (
        AsyncOpenAI(base_url=f"{a.url}/v1", api_key="x", max_retries=0) as sa,
        AsyncOpenAI(base_url=f"{b.url}/v1", api_key="x", max_retries=0) as sb,
    ):
        yield sa, sb


async def test_either_process_reports_the_traffic_of_both(
    two_apis: tuple[Server, Server], sdks: tuple[AsyncOpenAI, AsyncOpenAI]
) -> None:
    a, b = two_apis
    sa, sb = sdks
    before = scrape(a)
    await sa.responses.create(model="scripted", input="one")
    await sa.responses.create(model="scripted", input="two")
    async with await sb.responses.create(model="scripted", input="three", stream=True) as stream:
        events = [event async for event in stream]
    assert events[-1].type == "response.completed"
    await sb.chat.completions.create(model="scripted", messages=[{"role": "user", "content": "4"}])
    with pytest.raises(openai.InternalServerError):
        await sb.responses.create(model="broken", input="x")
    with pytest.raises(openai.BadRequestError):
        await sa.responses.create(model="scripted", input=[{"type": []}])  # type: ignore[list-item]

    for server in (a, b):
        after = scrape(server)

        def moved(name: str, **labels: str) -> float:
            return value(after, name, **labels) - value(before, name, **labels)  # noqa: B023

        route = {"service": "lgos", "route": "/v1/responses", "method": "POST"}
        assert moved("http_server_requests_total", **route, status="200") == 3
        assert moved("http_server_requests_total", **route, status="500") == 1
        assert moved("http_server_requests_total", **route, status="400") == 1
        chat = {"service": "lgos", "route": "/v1/chat/completions"}
        assert moved("http_server_requests_total", **chat, status="200") == 1
        assert moved("http_server_request_duration_seconds_count", **route) == 5
        assert moved("lgos_runs_total", graph="scripted", outcome="completed") == 4
        assert moved("lgos_runs_total", graph="broken", outcome="failed") == 1
        genai = {"gen_ai_operation_name": "chat", "gen_ai_request_model": "scripted"}
        assert moved("gen_ai_server_request_duration_seconds_count", **genai) == 4
        assert moved("gen_ai_server_time_to_first_token_seconds_count", **genai) == 1
        broken = {"gen_ai_request_model": "broken", "error_type": "RuntimeError"}
        assert moved("gen_ai_server_request_duration_seconds_count", **broken) == 1
        # Nothing left open; the scrape itself is the one request in flight.
        assert value(after, "lgos_open_streams", service="lgos") == 0
        assert value(after, "http_server_active_requests", service="lgos") == 1


async def test_the_background_queue_and_the_worker(
    two_apis: tuple[Server, Server],
    sdks: tuple[AsyncOpenAI, AsyncOpenAI],
    env: dict[str, str],
    state: Path,
) -> None:
    a, _ = two_apis
    sa, _ = sdks
    queued = await sa.responses.create(model="background-report", input="r", background=True)
    await asyncio.sleep(0.3)
    waiting = scrape(a)
    assert value(waiting, "lgos_background_queue_depth") == 1
    assert value(waiting, "lgos_background_oldest_job_age_seconds") >= 0.2
    (state / "worker-metrics").mkdir()
    worker_env = {**env, "PROMETHEUS_MULTIPROC_DIR": str(state / "worker-metrics")}
    with worker_process(worker_env, state / "worker.log", timeout=START) as worker:
        while queued.status in ("queued", "in_progress"):
            queued = await sa.responses.retrieve(queued.id)
        assert queued.status == "completed"
        seen = scrape(worker)
        assert value(seen, "lgos_worker_up") == 1
        assert value(seen, "lgos_worker_jobs_total", outcome="finished") == 1
        assert value(seen, "lgos_worker_running_jobs") == 0
        assert value(seen, "lgos_runs_total", graph="background-report", outcome="completed") == 1
    assert value(scrape(a), "lgos_background_queue_depth") == 0


async def test_paused_interrupt_runs_are_counted_from_the_shared_store(
    two_apis: tuple[Server, Server], sdks: tuple[AsyncOpenAI, AsyncOpenAI], env: dict[str, str]
) -> None:
    a, b = two_apis
    sa, sb = sdks
    pending = "lgos_interrupt_runs_pending"
    graph = "parallel-interrupts"
    # Every graph that declares interrupts is listed, at 0 before any pause.
    assert (pending, frozenset({("graph", "double-interrupt")})) in scrape(a)
    before = value(scrape(a), pending, graph=graph)
    first = await sa.responses.create(model=graph, input="one")
    second = await sb.responses.create(model=graph, input="two")
    assert [item.type for item in first.output] == ["function_call", "function_call"]
    for server in (a, b):  # paused in different processes, counted by either
        assert value(scrape(server), pending, graph=graph) - before == 2
    done = await sa.responses.create(
        model=graph,
        previous_response_id=second.id,
        input=[answer(call, "yes") for call in second.output],
    )
    assert done.output_text == "left=yes right=yes"
    assert value(scrape(b), pending, graph=graph) - before == 1
    assert value(scrape(b), pending, graph="double-interrupt") == 0
    # Expiry (the sweep, in a process of its own) takes the other one off.
    sweep = [sys.executable, "-m", "lgos", "sweep", "--ttl", "0"]
    swept = await asyncio.to_thread(
        subprocess.run, sweep, env={**os.environ, **env}, capture_output=True, timeout=60
    )
    assert swept.returncode == 0, swept.stderr
    assert value(scrape(a), pending, graph=graph) == 0


async def test_switched_off_nothing_is_recorded_and_metrics_answers_404(
    env: dict[str, str], state: Path
) -> None:
    off = {
        **env,
        "LGOS_METRICS_ENABLED": "false",
        "LGOS_BACKGROUND_QUEUE": f"lgos-test-metrics-off:{uuid.uuid4().hex[:8]}",
    }
    directories = [state / "off-api-metrics", state / "off-worker-metrics"]
    for directory in directories:
        directory.mkdir()
    api_env = {**off, "PROMETHEUS_MULTIPROC_DIR": str(directories[0])}
    worker_env = {**off, "PROMETHEUS_MULTIPROC_DIR": str(directories[1])}
    with (
        api_process(api_env, state / "off.log", timeout=START) as api,
        worker_process(worker_env, state / "off-worker.log", timeout=START) as worker,
    ):
        async with AsyncOpenAI(base_url=f"{api.url}/v1", api_key="x", max_retries=0) as sdk:
            assert (await sdk.responses.create(model="scripted", input="one")).status == "completed"
            async with await sdk.responses.create(model="scripted", input="2", stream=True) as s:
                events = [event async for event in s]
            assert events[-1].type == "response.completed"
            with pytest.raises(openai.InternalServerError):
                await sdk.responses.create(model="broken", input="x")
            job = await sdk.responses.create(model="background-report", input="r", background=True)
            while job.status in ("queued", "in_progress"):
                job = await sdk.responses.retrieve(job.id)
            assert job.status == "completed"
        async with httpx.AsyncClient(timeout=10) as http:
            for server in (api, worker):
                response = await http.get(f"{server.url}/metrics")
                assert response.status_code == 404
                assert response.json()["error"]["code"] == "not_found"
                assert response.json()["error"]["type"] == "invalid_request_error"
            assert (await http.get(f"{worker.url}/health")).json()["status"] == "ok"
    # Nothing counted or timed in either process: every sample they left is still zero.
    for directory in directories:
        registry = CollectorRegistry()
        MultiProcessCollector(registry, path=str(directory))
        samples = [s for family in registry.collect() for s in family.samples]
        assert [s for s in samples if s.value != 0] == []


@pytest.mark.parametrize(
    ("method", "target", "headers"),
    [
        ("GET", "/metrics?name[]=x&%00=%ff", {}),
        (
            "GET",
            "/metrics",
            {"Accept": "application/openmetrics-text; version=9", "X-Hostile": "<'\"%00>"},
        ),
        ("GET", "/metrics?" + "a=b&" * 2000, {"Accept-Encoding": "gzip;q=bogus"}),
        ("POST", "/metrics", {}),
    ],
)
def test_metrics_is_total_and_open(
    two_apis: tuple[Server, Server], method: str, target: str, headers: dict[str, str]
) -> None:
    a, _ = two_apis
    response = httpx.request(method, f"{a.url}{target}", headers=headers, timeout=10)
    assert response.status_code in (200, 405)
    if response.status_code == 405:
        assert response.json()["error"]["type"] == "invalid_request_error"
    assert "x-request-id" in response.headers


def test_a_stopped_process_leaves_its_counts_but_not_its_live_gauges(
    env: dict[str, str], state: Path, two_apis: tuple[Server, Server]
) -> None:
    a, _ = two_apis
    with api_process(env, state / "c.log", timeout=START) as c:
        httpx.post(f"{c.url}/v1/responses", json={"model": "scripted", "input": "c"}, timeout=30)
        during = scrape(a)
    after = scrape(a)
    name, labels = "http_server_requests_total", {"route": "/v1/responses", "status": "200"}
    assert value(after, name, **labels) == value(during, name, **labels)
    assert value(after, "http_server_active_requests", service="lgos") == 1


async def test_files_uploads_and_indexing_backlog(files_process: FilesProcess) -> None:
    server = files_process.server
    before = scrape(server)
    async with files_client(f"{server.url}/v1") as files:
        await files.files.create(file=("m.md", b"twelve bytes"), purpose="assistants")
        with pytest.raises(openai.BadRequestError):
            await files.files.create(file=("m.md", b"x"), purpose="nope")  # type: ignore[arg-type]
    after = scrape(server)
    assert (
        value(after, "files_uploads_total", purpose="assistants")
        - value(before, "files_uploads_total", purpose="assistants")
        == 1
    )
    assert (
        value(after, "files_upload_bytes_total") - value(before, "files_upload_bytes_total") == 12
    )
    upload = {"service": "files", "route": "/v1/files", "method": "POST"}
    for status, count in (("200", 1), ("400", 1)):
        moved = value(after, "http_server_requests_total", **upload, status=status) - value(
            before, "http_server_requests_total", **upload, status=status
        )
        assert moved == count
    assert ("files_indexing_backlog", frozenset()) in after


async def test_the_files_service_switched_off_records_nothing_and_answers_404(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "files-metrics"
    directory.mkdir()
    settings = {"FILES_METRICS_ENABLED": "false", "PROMETHEUS_MULTIPROC_DIR": str(directory)}
    with files_service(tmp_path, API_KEY, **settings) as process:
        server = process.server
        async with files_client(f"{server.url}/v1") as files:
            await files.files.create(file=("m.md", b"twelve bytes"), purpose="assistants")
        async with httpx.AsyncClient(timeout=10) as http:
            response = await http.get(f"{server.url}/metrics")
            health = await http.get(f"{server.url}/health")
    assert response.status_code == 404
    assert response.json()["error"]["type"] == "invalid_request_error"
    assert health.json()["status"] == "ok"
    registry = CollectorRegistry()
    MultiProcessCollector(registry, path=str(directory))
    samples = [s for family in registry.collect() for s in family.samples]
    assert [s for s in samples if s.value != 0] == []
