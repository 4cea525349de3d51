"""The real LiteLLM gateway in front of the real LGOS process, with dbhub as its MCP server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.clients import sdk_fixture
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import FilesProcess
from tests.support.gateways import GATEWAY_KEY, run_litellm_sync, serve_dbhub, serve_litellm
from tests.support.servers import Server, free_port, serve


@pytest.fixture(scope="session")
def gateway_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("gateway")


@pytest.fixture(scope="session")
def dbhub(gateway_state: Path) -> Iterator[Server]:
    with serve_dbhub(gateway_state) as server:
        yield server


@pytest.fixture(scope="session")
def litellm_gateway(
    lgos_server: Server, dbhub: Server, files_process: FilesProcess, gateway_state: Path
) -> Iterator[Server]:
    """Synced from the running LGOS, then started (the order `make dev` uses)."""
    config = gateway_state / "litellm.yaml"
    synced = run_litellm_sync("--lgos-url", lgos_server.url, "--config", str(config))
    assert synced.returncode == 0, synced.stderr
    env = {
        "MCP_DEMO_DB_URL": f"{dbhub.url}/mcp",
        # The real Files service process behind the gateway's Files API.
        "FILES_API_BASE": f"{files_process.server.url}/v1",
        "FILES_API_KEY": FILES_KEY,
    }
    with serve_litellm(config, gateway_state, env) as server:
        yield server


gateway = sdk_fixture("litellm_gateway", api_key=GATEWAY_KEY)


@pytest.fixture
def demo_lgos(offline_model: Server, searxng: Server, tmp_path: Path) -> Iterator[Server]:
    """A second LGOS serving the demo registry only: the test graphs have 'disappeared'."""
    port = free_port()
    env = {
        "LGOS_PORT": str(port),
        "LGOS_STATE_DIR": str(tmp_path / "lgos-state"),
        "DEMO_API_OFFLINE_MODEL_URL": f"{offline_model.url}/v1",
        "DEMO_API_WEB_SEARCH_URL": searxng.url,
    }
    with serve(
        ["lgos", "serve", "lgos_demo_graphs.registry:create_registry"],
        port=port,
        env=env,
        log=tmp_path / "lgos-demo.log",
    ) as server:
        yield server
