"""Shared fixtures: a real offline-model process, LGOS in-process and over a real socket."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import pytest
from fastapi import FastAPI
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.servers import Server, free_port, serve, serve_searxng

# The Files service's fixtures (databases, moto_server, MiniLM) live beside its other helpers.
pytest_plugins = ["tests.support.files"]

PING_INTERVAL = 0.3


@pytest.fixture(scope="session")
def markers(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("markers")
    os.environ["LGOS_TEST_MARKERS"] = str(path)
    return path


@pytest.fixture(scope="session")
def offline_model(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "offline-model.log"
    with serve(["offline_model", "--port", str(port)], port=port, env={}, log=log) as server:
        # Demo graphs read these when the registry is built.
        os.environ["DEMO_API_OFFLINE_MODEL_URL"] = f"{server.url}/v1"
        os.environ.pop("DEMO_API_OPENAI_API_KEY", None)
        yield server


@pytest.fixture(scope="session")
def searxng(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serve_searxng(tmp_path_factory.mktemp("searxng")) as server:
        os.environ["DEMO_API_WEB_SEARCH_URL"] = server.url
        yield server


@pytest.fixture(scope="session")
def lgos_app(offline_model: Server, searxng: Server, markers: Path) -> FastAPI:
    from lgos import LGOSSettings, create_app

    from tests.support.graphs import create_registry

    state_dir = Path(os.environ["LGOS_TEST_MARKERS"]).parent / "asgi-state"
    settings = LGOSSettings(sse_ping_interval=PING_INTERVAL, state_dir=state_dir)
    return create_app(create_registry(), settings)


@pytest.fixture(scope="session")
def lgos_server(
    offline_model: Server,
    searxng: Server,
    markers: Path,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    port = free_port()
    log = tmp_path_factory.mktemp("logs") / "lgos.log"
    env = {
        "LGOS_PORT": str(port),
        "LGOS_SSE_PING_INTERVAL": str(PING_INTERVAL),
        "LGOS_TEST_MARKERS": str(markers),
        "LGOS_STATE_DIR": str(tmp_path_factory.mktemp("lgos-state")),
        "DEMO_API_OFFLINE_MODEL_URL": f"{offline_model.url}/v1",
        "DEMO_API_WEB_SEARCH_URL": searxng.url,
    }
    with serve(
        ["lgos", "serve", "tests.support.graphs:create_registry"], port=port, env=env, log=log
    ) as server:
        yield server


@pytest.fixture(params=["asgi", "socket"])
async def client(request: pytest.FixtureRequest, lgos_app: FastAPI) -> AsyncIterator[AsyncOpenAI]:
    """The official SDK against LGOS, in-process (ASGI transport) and over a real socket."""
    if request.param == "asgi":
        transport = httpx.ASGITransport(app=lgos_app)
        async with httpx.AsyncClient(transport=transport, base_url="http://lgos.test") as http:
            yield sdk_client("http://lgos.test/v1", http)
    else:
        server: Server = request.getfixturevalue("lgos_server")
        async with sdk_client(f"{server.url}/v1") as sdk:
            yield sdk


@pytest.fixture
async def socket_client(lgos_server: Server) -> AsyncIterator[AsyncOpenAI]:
    async with sdk_client(f"{lgos_server.url}/v1") as sdk:
        yield sdk
