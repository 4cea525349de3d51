"""Shared fixtures: a real offline-model process, LGOS in-process and over a real socket."""

from __future__ import annotations

import faulthandler
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fastapi import FastAPI
from openai import AsyncOpenAI

from tests.support.clients import sdk_fixture
from tests.support.engines import IN_PROCESS, PING_INTERVAL, engine_client
from tests.support.servers import OFFLINE_MODEL_ECHO, Server, free_port, serve, serve_searxng

# The Files service's fixtures (databases, moto_server, MiniLM) live beside its other helpers, as
# do the queue-backed background engine and the OTLP trace receiver.
pytest_plugins = [
    "tests.support.files",
    "tests.support.otlp_receiver",
    "tests.support.queue_engine",
]

EXIT_GRACE = 120.0
"""Seconds the test process may take to exit once the run is over."""


@pytest.hookimpl(trylast=True)
def pytest_unconfigure(config: pytest.Config) -> None:
    # A thread left running (an unclosed connection's worker, say) keeps the interpreter from
    # exiting after the summary, and a CI run would wait for it until its time limit. Past
    # EXIT_GRACE, print every thread's stack and exit 1 instead.
    watchdog = threading.Timer(EXIT_GRACE, exit_stuck)
    watchdog.daemon = True
    watchdog.start()


def exit_stuck() -> None:
    err = sys.__stderr__
    assert err is not None
    err.write(f"the test process did not exit {EXIT_GRACE:.0f}s after the run; its threads:\n")
    err.flush()
    faulthandler.dump_traceback(file=err, all_threads=True)
    os._exit(1)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--compose-stack",
        action="store_true",
        help="also run the tests marked compose_stack (make test-compose-stack)",
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The whole compose stack takes many minutes and the machine's project ports: its own target.
    if config.getoption("--compose-stack"):
        return
    skip = pytest.mark.skip(reason="the whole compose stack runs with make test-compose-stack")
    for item in items:
        if item.get_closest_marker("compose_stack"):
            item.add_marker(skip)


def pytest_configure(config: pytest.Config) -> None:
    # Graphs under test talk to offline-model only: a developer's real key must not reach them,
    # in this process or in any server process it starts (they inherit this environment).
    os.environ.pop("DEMO_API_OPENAI_API_KEY", None)


@pytest.fixture(scope="session")
def markers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the test graphs leave their markers (started-, cancelled-, effect-<key>)."""
    return tmp_path_factory.mktemp("markers")


@pytest.fixture(scope="session")
def offline_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """offline-model in echo mode: tests through it assert on what reached the model (the latest
    message, instructions, tool outputs, file ids), not on the answer a person reads."""
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "offline-model.log"
    with serve(
        ["offline_model", "--port", str(port)], port=port, env=OFFLINE_MODEL_ECHO, log=log
    ) as server:
        yield server


@pytest.fixture(scope="session")
def readable_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """offline-model as a person meets it: short answers quoting their evidence."""
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "offline-model-readable.log"
    with serve(["offline_model", "--port", str(port)], port=port, env={}, log=log) as server:
        yield server


@pytest.fixture(scope="session")
def searxng(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve_searxng(tmp_path_factory.mktemp("searxng")) as server:
        yield server


@pytest.fixture(scope="session")
def graph_env(offline_model: Server, searxng: Server, markers: Path) -> dict[str, str]:
    """What the test and demo graphs read from their process's environment."""
    return {
        "DEMO_API_OFFLINE_MODEL_URL": f"{offline_model.url}/v1",
        "DEMO_API_WEB_SEARCH_URL": searxng.url,
        "LGOS_TEST_MARKERS": str(markers),
    }


@pytest.fixture(scope="session")
def in_process_graphs(graph_env: dict[str, str]) -> Iterator[None]:
    """Graphs built in this process read ``graph_env`` where a served graph would: os.environ."""
    with pytest.MonkeyPatch.context() as patch:
        for name, value in graph_env.items():
            patch.setenv(name, value)
        yield


IN_PROCESS_APPS: list[FastAPI] = []
"""LGOS apps served in-process through httpx's ASGI transport, which never runs their lifespan."""


@pytest.fixture(scope="session", autouse=True)
async def in_process_apps_closed() -> AsyncIterator[None]:
    """Close what the in-process apps opened on first use, in the loop that opened it: the SQLite
    checkpointer's connection thread would otherwise keep the interpreter from exiting."""
    yield
    for app in IN_PROCESS_APPS:
        await app.state.lgos.aclose()


@pytest.fixture(scope="session")
def lgos_app(in_process_graphs: None, tmp_path_factory: pytest.TempPathFactory) -> FastAPI:
    from lgos import LGOSSettings, create_app

    from tests.support.graphs import create_registry

    state_dir = tmp_path_factory.mktemp("asgi-state")
    settings = LGOSSettings(sse_ping_interval=PING_INTERVAL, state_dir=state_dir)
    app = create_app(create_registry(), settings)
    IN_PROCESS_APPS.append(app)
    return app


@pytest.fixture(scope="session")
def lgos_server(
    graph_env: dict[str, str], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "lgos.log"
    env = {
        **graph_env,
        "LGOS_PORT": str(port),
        "LGOS_SSE_PING_INTERVAL": str(PING_INTERVAL),
        "LGOS_STATE_DIR": str(tmp_path_factory.mktemp("lgos-state")),
    }
    with serve(
        ["lgos", "serve", "tests.support.graphs:create_registry"], port=port, env=env, log=log
    ) as server:
        yield server


@pytest.fixture(params=IN_PROCESS)
async def client(request: pytest.FixtureRequest) -> AsyncIterator[AsyncOpenAI]:
    """The official SDK against LGOS, in-process (ASGI transport) and over a real socket."""
    async with engine_client(request, request.param) as sdk:
        yield sdk


socket_client = sdk_fixture("lgos_server")
