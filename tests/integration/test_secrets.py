"""No secret appears in model discovery, an error or a log line.

Every service gets a distinctive secret (LGOS API keys, the graphs' model key, database
passwords, the Files service key, the LiteLLM gateway's master key); the test drives traffic
and failures (wrong keys, unknown ids, bad input, a failing graph, background and interrupt
runs, uploads) directly and through the real LiteLLM proxy (which holds the LGOS and Files
keys), then greps every response body and header and every log file for each secret.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
import redis

from tests.support.gateways import run_litellm_sync, serve_litellm
from tests.support.metadata import lgos_settings
from tests.support.servers import Server, free_port, serve, serve_lgos
from tests.support.shared_state import REDIS_URL

LGOS_KEY = "sk-lgos-secret-7f3a9c"
MODEL_KEY = "sk-model-secret-b41d2e"
FILES_KEY = "sk-files-secret-e8c5a1"
PG_PASSWORD = "pg-secret-90ad7b"
GATEWAY_MASTER_KEY = "sk-gateway-secret-5c27f0"
SECRETS = (LGOS_KEY, MODEL_KEY, FILES_KEY, PG_PASSWORD, GATEWAY_MASTER_KEY)
# Internal state a client must not see either.
TRACEBACK = "Traceback (most recent call last)"


@dataclass
class Seen:
    texts: list[str] = field(default_factory=list)

    def record(self, response: httpx.Response) -> httpx.Response:
        self.texts.append(response.text)
        self.texts.extend(f"{k}: {v}" for k, v in response.headers.items())
        return response


def with_password(uri: str) -> str:
    # The test servers trust local connections, so a password in the URI is accepted (and
    # must still never be shown).
    scheme, rest = uri.split("://", 1)
    user_host = rest.split("@", 1)
    user, host = (user_host[0], user_host[1]) if len(user_host) == 2 else ("postgres", rest)
    return f"{scheme}://{user.split(':')[0]}:{PG_PASSWORD}@{host}"


@pytest.fixture(scope="module")
def stack(
    postgres_uri: str, offline_model: Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Server, Path, Path]]:
    logs = tmp_path_factory.mktemp("secrets")
    queue = f"lgos-test-secrets:{uuid.uuid4().hex[:8]}"
    lgos_env = {
        "LGOS_POSTGRES_URI": with_password(postgres_uri),
        "LGOS_REDIS_URL": REDIS_URL,
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": queue,
        "LGOS_STATE_DIR": str(logs),
        "LGOS_API_KEYS": f"{LGOS_KEY}=tenant",
        "LGOS_LOG_LEVEL": "debug",
        # The graphs' "real model" is offline-model reached with a key, as a provider would be.
        "DEMO_API_OPENAI_API_KEY": MODEL_KEY,
        "DEMO_API_OPENAI_BASE_URL": f"{offline_model.url}/v1",
        "DEMO_API_OPENAI_MODEL": "offline-model",
        "DEMO_API_REPORT_STEP_SECONDS": "0.05",
    }
    files_env = {
        "FILES_POSTGRES_URI": with_password(postgres_uri),
        "FILES_STORAGE_DIR": str(logs / "files"),
        "FILES_API_KEYS": FILES_KEY,
    }
    files_port = free_port()
    target = "lgos_demo_graphs.registry:create_registry"
    with (
        serve_lgos("serve", target, env=lgos_env, log=logs / "lgos.log") as lgos,
        serve_lgos("worker", target, env=lgos_env, log=logs / "worker.log"),
        serve(
            ["files_service"],
            port=files_port,
            env={**files_env, "FILES_PORT": str(files_port)},
            log=logs / "files.log",
        ) as files,
    ):
        yield lgos, files, logs, offline_model.log
    redis.Redis.from_url(REDIS_URL).delete(queue)


def responses_traffic(prefix: str) -> list[dict[str, object]]:
    """Responses bodies that answer, fail validation or fail inside the graph (both ways)."""
    failure = lgos_settings(outcome="failure")
    return [
        {"model": f"{prefix}simple-graph", "input": "hello"},
        {"model": f"{prefix}simple-graph", "input": "hello", "stream": True},
        {"model": f"{prefix}missing", "input": "x"},
        {"model": f"{prefix}simple-graph", "input": [{"type": []}]},
        {"model": f"{prefix}simple-graph", "input": "x", "temperature": 2},
        {"model": f"{prefix}response-outcomes", "input": "x", "metadata": failure},
        {"model": f"{prefix}response-outcomes", "input": "x", "stream": True, "metadata": failure},
    ]


def drive_lgos(http: httpx.Client, seen: Seen) -> None:
    keyed = {"Authorization": f"Bearer {LGOS_KEY}"}
    for headers in ({}, {"Authorization": "Bearer sk-wrong"}, {"Authorization": LGOS_KEY}):
        seen.record(http.get("/v1/models", headers=headers))
    models = seen.record(http.get("/v1/models", headers=keyed)).json()["data"]
    for model in models:
        seen.record(http.get(f"/v1/models/{model['id']}", headers=keyed))
    bodies = [
        *responses_traffic(""),
        {"model": "interruptible-approval", "input": "Ship it"},
        {
            "model": "interruptible-approval",
            "input": [],
            "previous_response_id": "resp_lg_" + "0" * 32 + "_" + "0" * 32,
        },
    ]
    for body in bodies:
        seen.record(http.post("/v1/responses", json=body, headers=keyed))
    seen.record(
        http.post(
            "/v1/chat/completions",
            headers=keyed,
            json={"model": "simple-graph", "messages": [{"role": "user", "content": "x"}]},
        )
    )
    queued = seen.record(
        http.post(
            "/v1/responses",
            headers=keyed,
            json={"model": "background-report", "input": "report", "background": True},
        )
    ).json()
    failing = seen.record(
        http.post(
            "/v1/responses",
            headers=keyed,
            json={
                "model": "background-report",
                "input": "x",
                "background": True,
                "metadata": {"lgos_settings": "{}"},
            },
        )
    ).json()
    for _ in range(100):
        snapshot = seen.record(http.get(f"/v1/responses/{queued['id']}", headers=keyed)).json()
        if snapshot["status"] not in ("queued", "in_progress"):
            break
        time.sleep(0.1)
    assert snapshot["status"] == "completed", snapshot
    seen.record(http.get(f"/v1/responses/{failing['id']}", headers=keyed))
    seen.record(http.get("/v1/responses/resp_" + "1" * 32, headers=keyed))


def upload(http: httpx.Client, headers: dict[str, str]) -> httpx.Response:
    """A raw Files API upload of a tiny knowledge file."""
    return http.post(
        "/v1/files", headers=headers, files={"file": ("a.md", b"x")}, data={"purpose": "assistants"}
    )


def drive_files(http: httpx.Client, seen: Seen) -> None:
    keyed = {"Authorization": f"Bearer {FILES_KEY}"}
    for headers in ({}, {"Authorization": "Bearer sk-wrong"}):
        seen.record(http.get("/v1/files", headers=headers))
    uploaded = seen.record(upload(http, keyed)).json()
    seen.record(http.get(f"/v1/files/{uploaded['id']}", headers=keyed))
    seen.record(http.get("/v1/files/file-unknown", headers=keyed))
    seen.record(http.post("/v1/files", headers=keyed, data={"purpose": "nope"}))
    seen.record(http.post("/v1/vector_stores", headers=keyed, json={"name": "x\x00"}))
    seen.record(http.get("/v1/files?after=%00", headers=keyed))
    seen.record(http.delete(f"/v1/files/{uploaded['id']}", headers=keyed))


def test_no_secret_in_any_response_or_log(stack: tuple[Server, Server, Path, Path]) -> None:
    lgos, files, logs, model_log = stack
    seen = Seen()
    with httpx.Client(base_url=lgos.url, timeout=60) as http:
        drive_lgos(http, seen)
    with httpx.Client(base_url=files.url, timeout=60) as http:
        drive_files(http, seen)
    log_files = [*sorted(logs.glob("*.log")), model_log]
    assert {p.name for p in log_files} >= {"lgos.log", "worker.log", "files.log"}
    # The graph failures were logged with their details, so the logs are not empty.
    assert "DemoFailure" in (logs / "lgos.log").read_text()
    for text in seen.texts:
        assert TRACEBACK not in text, f"a stack trace in a response: {text[:300]}"
    for secret in SECRETS:
        for text in seen.texts:
            assert secret not in text, f"{secret} in a response: {text[:300]}"
        for log in log_files:
            assert secret not in log.read_text(), f"{secret} in {log.name}"


@pytest.fixture(scope="module")
def gateway(stack: tuple[Server, Server, Path, Path]) -> Iterator[Server]:
    """The real LiteLLM proxy as `make dev` runs it: it holds the LGOS key and the Files key."""
    lgos, files, logs, _ = stack
    config = logs / "litellm.yaml"
    synced = run_litellm_sync(
        "--lgos-url",
        lgos.url,
        "--config",
        str(config),
        "--upstream-key",
        "os.environ/LGOS_API_KEY",
        env={"LGOS_API_KEY": LGOS_KEY, "LGOS_URL": lgos.url},
    )
    assert synced.returncode == 0, synced.stderr
    # The config names variables, never the keys themselves.
    assert not any(secret in config.read_text() for secret in SECRETS)
    env = {
        "OPENAI_GATEWAY_API_KEY": GATEWAY_MASTER_KEY,
        "LGOS_API_KEY": LGOS_KEY,
        "FILES_API_BASE": f"{files.url}/v1",
        "FILES_API_KEY": FILES_KEY,
        # No MCP server runs here: the demo_db entry points at a closed port (one more failure).
        "MCP_DEMO_DB_URL": f"http://127.0.0.1:{free_port()}/mcp",
    }
    with serve_litellm(config, logs, env, name="litellm") as server:
        yield server


def drive_gateway(http: httpx.Client, seen: Seen) -> None:
    keyed = {"Authorization": f"Bearer {GATEWAY_MASTER_KEY}"}
    for headers in ({}, {"Authorization": "Bearer sk-wrong"}, {"x-litellm-api-key": "sk-x"}):
        seen.record(http.get("/v1/models", headers=headers))
        seen.record(http.post("/v1/responses", headers=headers, json={"model": "x"}))
    # Discovery and what a key holder can read about deployments.
    for path in ("/v1/models", "/model/info", "/v1/model/info", "/model_group/info"):
        seen.record(http.get(path, headers=keyed))
    for body in (
        *responses_traffic("lgos/"),
        {"model": "lgos-files-service", "input": "x"},
        {"model": "lgos/background-report", "input": "x", "background": True},
    ):
        seen.record(http.post("/v1/responses", json=body, headers=keyed))
    seen.record(http.get("/v1/responses/resp_" + "1" * 32, headers=keyed))
    for model in ("lgos/simple-graph", "lgos/missing"):
        seen.record(
            http.post(
                "/v1/chat/completions",
                headers=keyed,
                json={"model": model, "messages": [{"role": "user", "content": "x"}]},
            )
        )
    # The Files API through the gateway (to the Files service with the key the gateway holds).
    uploaded = seen.record(upload(http, keyed))
    seen.record(http.get("/v1/files", headers=keyed))
    seen.record(http.get("/v1/files/file-unknown", headers=keyed))
    seen.record(http.post("/v1/files", headers=keyed, data={"purpose": "nope"}))
    if uploaded.status_code == 200:
        seen.record(http.delete(f"/v1/files/{uploaded.json()['id']}", headers=keyed))
    # MCP tools: the configured server is down.
    seen.record(http.get("/v1/mcp/tools", headers=keyed))
    # LiteLLM's health check calls every deployment and reports each with its parameters.
    seen.record(http.get("/health", headers=keyed, params={"model": "lgos/simple-graph"}))
    seen.record(http.get("/health", headers=keyed, params={"model": "lgos-files-service"}))


def test_no_secret_through_the_litellm_gateway(
    stack: tuple[Server, Server, Path, Path], gateway: Server
) -> None:
    _, _, logs, _ = stack
    seen = Seen()
    with httpx.Client(base_url=gateway.url, timeout=60) as http:
        drive_gateway(http, seen)
    statuses = [t for t in seen.texts if t.startswith("{")]
    assert statuses  # the gateway answered with bodies
    log = (logs / "litellm.log").read_text()
    assert "lgos/simple-graph" in log or "litellm" in log.lower()
    for secret in SECRETS:
        for text in seen.texts:
            assert secret not in text, f"{secret} in a gateway response: {text[:300]}"
        assert secret not in log, f"{secret} in litellm.log"
    for text in seen.texts:
        assert TRACEBACK not in text, f"a stack trace in a gateway response: {text[:300]}"
