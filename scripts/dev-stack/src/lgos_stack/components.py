"""The stack's components, one function each, in an order that is also a valid one-by-one start
order (``COMPONENTS``); ``lgos_stack.order`` says what each one actually waits for."""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from collections.abc import Callable

from lgos_gateways.mcp_demo_db import DBHUB_ENTRY, dbhub_command
from pydantic import TypeAdapter, ValidationError

from lgos_stack import jobs
from lgos_stack.keys import (
    chainlit_login,
    files_key,
    files_keys,
    gateway_key,
    lgos_key,
    open_webui_admin,
)
from lgos_stack.model import Component, Setup
from lgos_stack.paths import (
    CHAINLIT_BIN,
    CHAINLIT_DIR,
    EMBEDDINGS_PYTHON,
    EMBEDDINGS_SERVER,
    LITELLM_BIN,
    OPEN_WEBUI_BIN,
    PG_BIN,
    PHOENIX_BIN,
    PROMETHEUS_BIN,
    SEARXNG_PYTHON,
    UI_PYTHONPATH,
    pg_data,
    state_dir,
)
from lgos_stack.ports import Ports, postgres_url
from lgos_stack.servers import phoenix_env, postgres_command, prometheus_command, redis_command

DEMO_REGISTRY = "lgos_demo_graphs.registry:create_registry"
"""What LGOS serves when LGOS_REGISTRY is unset: the demo graphs."""
CHAINLIT_DATABASE = "chainlit"
OPEN_WEBUI_HEALTH_TIMEOUT = 240.0
SHOWCASE_GRAPH = "advanced-graph"
"""The graph both UIs open on (Open WebUI's DEFAULT_MODELS; Chainlit picks it from the catalog)."""
"""Its first start migrates a fresh database: ≈ 40 s here, several times that on a busy CPU."""
PHOENIX_HEALTH_TIMEOUT = 120.0
"""≈ 14 s here (17 s the first time, which migrates its SQLite database); more on a busy CPU."""


def postgres(ports: Ports) -> Component:
    return Component(
        name="postgres",
        port=ports.postgres,
        args=postgres_command(pg_data(), ports.postgres),
        tcp_health=True,
        service_user=True,
        requires=(PG_BIN / "initdb",),
        setup=jobs.init_postgres,
    )


def redis(ports: Ports) -> Component:
    return Component(
        name="redis", port=ports.redis, args=redis_command(ports.redis), tcp_health=True
    )


def searxng(ports: Ports) -> Component:
    return Component(
        name="searxng",
        port=ports.searxng,
        args=[str(SEARXNG_PYTHON), "-m", "searx.webapp"],
        env={"SEARXNG_SETTINGS_PATH": str(state_dir() / "searxng-settings.yml")},
        health_path="/healthz",
        requires=(SEARXNG_PYTHON,),
        setup=jobs.render_searxng_settings,
    )


def embeddings(ports: Ports) -> Component:
    return Component(
        name="embeddings",
        port=ports.embeddings,
        args=[str(EMBEDDINGS_PYTHON), str(EMBEDDINGS_SERVER), "--port", str(ports.embeddings)],
        requires=(EMBEDDINGS_PYTHON,),
    )


def files(ports: Ports) -> Component:
    return Component(
        name="files",
        port=ports.files,
        args=[sys.executable, "-m", "files_service", "--port", str(ports.files)],
        env={
            "FILES_POSTGRES_URI": postgres_url(ports.postgres),
            "FILES_STORAGE": "disk",
            "FILES_STORAGE_DIR": str(state_dir() / "files"),
            "FILES_API_KEYS": files_keys(),
            "FILES_EMBEDDINGS_URL": f"http://127.0.0.1:{ports.embeddings}/v1",
        },
    )


def offline_model(ports: Ports) -> Component:
    return Component(
        name="offline-model",
        port=ports.offline_model,
        args=[sys.executable, "-m", "offline_model", "--port", str(ports.offline_model)],
    )


def lgos_env(ports: Ports) -> dict[str, str]:
    """What LGOS and its worker share: the model, search, PostgreSQL, Redis and Files."""
    return {
        "DEMO_API_OFFLINE_MODEL_URL": f"http://127.0.0.1:{ports.offline_model}/v1",
        "DEMO_API_WEB_SEARCH_URL": f"http://127.0.0.1:{ports.searxng}",
        "LGOS_POSTGRES_URI": postgres_url(ports.postgres),
        "LGOS_REDIS_URL": f"redis://127.0.0.1:{ports.redis}/0",
        "LGOS_BACKGROUND": "distributed",
        **jobs.knowledge_env(ports),
        # LGOS checks keys in the native stack: the gateway holds this one.
        "LGOS_API_KEYS": f"{lgos_key()}=gateway",
        **registry_env(),
    }


def registry_env() -> dict[str, str]:
    """What LGOS and its worker serve: LGOS_REGISTRY (the demo graphs unless set), then the
    project LGOS_PROJECT names; LGOS_APP_DIR and LGOS_PROJECT made absolute (the processes run
    from the repository root). LGOS reports a project it cannot serve."""
    env = {"LGOS_REGISTRY": os.environ.get("LGOS_REGISTRY") or DEMO_REGISTRY}
    for variable in ("LGOS_APP_DIR", "LGOS_PROJECT"):
        if folder := os.environ.get(variable):
            env[variable] = os.path.abspath(os.path.expanduser(folder))
    return env


def reload_args() -> list[str]:
    """``--reload`` when LGOS_RELOAD is on (read as LGOS reads its settings): a change of the
    served code restarts LGOS and its worker. An invalid value is left for LGOS to report."""
    try:
        on = TypeAdapter(bool).validate_python(os.environ.get("LGOS_RELOAD") or "false")
    except ValidationError:
        return []
    return ["--reload"] if on else []


def lgos(ports: Ports) -> Component:
    return _lgos("lgos", "serve", ports.lgos, ports, setup=jobs.prepare_knowledge)


def lgos_second(ports: Ports) -> Component:
    """The second instance of the same registry and shared state: any instance answers any
    follow-up (a paused review, a background job), so the gateway routes to both."""
    return _lgos("lgos-2", "serve", ports.lgos_second, ports)


def lgos_worker(ports: Ports) -> Component:
    return _lgos("lgos-worker", "worker", ports.lgos_worker, ports)


def _lgos(
    name: str, command: str, port: int, ports: Ports, setup: Setup | None = None
) -> Component:
    """``lgos serve`` or ``lgos worker`` of LGOS_REGISTRY: the same settings for both."""
    args = [sys.executable, "-m", "lgos", command, "--port", str(port), *reload_args()]
    return Component(name=name, port=port, args=args, env=lgos_env(ports), setup=setup)


def mcp_db(ports: Ports) -> Component:
    return Component(
        name="mcp-db",
        port=ports.mcp_db,
        args=dbhub_command(ports.mcp_db, state_dir() / "dbhub.toml"),
        health_path="/healthz",
        requires=(DBHUB_ENTRY,),
        setup=jobs.prepare_mcp_db,
    )


def gateway(ports: Ports) -> Component:
    state = state_dir()
    return Component(
        name="gateway",
        port=ports.gateway,
        args=[
            *(sys.executable, "-m", "lgos_gateways.litellm_serve"),
            *("--config", str(state / "litellm.yaml"), "--port", str(ports.gateway)),
            *("--pid-file", str(state / "litellm.pid"), "--litellm", str(LITELLM_BIN)),
        ],
        env={
            "OPENAI_GATEWAY_API_KEY": gateway_key(),
            "MCP_DEMO_DB_URL": f"http://127.0.0.1:{ports.mcp_db}/mcp",
            "FILES_API_BASE": f"http://127.0.0.1:{ports.files}/v1",
            # The gateway holds a Files service key; clients hold only the gateway's.
            "FILES_API_KEY": os.environ.get("FILES_API_KEY") or files_key(),
            "LGOS_API_KEY": lgos_key(),
        },
        health_path="/health/liveliness",
        requires=(LITELLM_BIN,),
        setup=jobs.sync_gateway_catalog,
    )


def chainlit(ports: Ports) -> Component:
    username, password = chainlit_login()
    return Component(
        name="chainlit",
        port=ports.chainlit,
        args=[
            *(str(CHAINLIT_BIN), "run", str(CHAINLIT_DIR / "app.py"), "--headless"),
            *("--host", "127.0.0.1", "--port", str(ports.chainlit)),
        ],
        env={
            "CHAINLIT_APP_ROOT": str(jobs.chainlit_app_root()),
            "CHAINLIT_FILES_DIR": str(state_dir() / "chainlit-elements"),
            # lgos_ui and service_kit from this checkout (the image installs the packages).
            "PYTHONPATH": UI_PYTHONPATH,
            # Only the gateway: never LGOS. Not OPENAI_API_KEY (chainlit's CI mode resets it).
            "OPENAI_GATEWAY_BASE_URL": f"http://127.0.0.1:{ports.gateway}/v1",
            "OPENAI_GATEWAY_API_KEY": gateway_key(),
            "OPENAI_GATEWAY_TYPE": "litellm",
            "CHAINLIT_DATABASE_URL": postgres_url(ports.postgres, CHAINLIT_DATABASE),
            "CHAINLIT_USERNAME": username,
            "CHAINLIT_PASSWORD": password,
        },
        requires=(CHAINLIT_BIN,),
        setup=jobs.prepare_chainlit,
    )


def open_webui_env(ports: Ports) -> dict[str, str]:
    """Offline-safe: no Ollama, no direct model connections, no downloads, and none of the
    background tasks (titles, tags, follow-ups, queries) that would each cost a graph run."""
    gateway = f"http://127.0.0.1:{ports.gateway}"
    mcp = {
        "type": "mcp",
        "url": f"{gateway}/mcp",
        "auth_type": "bearer",
        "key": gateway_key(),
        "config": {
            "enable": True,
            "access_grants": [
                {"principal_type": "user", "principal_id": "*", "permission": "read"}
            ],
        },
        "info": {"id": "gw", "name": "LGOS gateway MCP", "description": "The demo database"},
    }
    off = "false"
    return {
        **open_webui_admin(),
        "DATA_DIR": str(state_dir() / "open-webui"),
        # Env is the source of truth on every start (otherwise it only seeds the first boot).
        "ENABLE_PERSISTENT_CONFIG": off,
        "ENABLE_SIGNUP": off,
        "OFFLINE_MODE": "true",
        "HF_HUB_OFFLINE": "1",
        "RAG_EMBEDDING_ENGINE": "openai",
        "BYPASS_EMBEDDING_AND_RETRIEVAL": "true",
        "ENABLE_OLLAMA_API": off,
        "OLLAMA_BASE_URL": "http://127.0.0.1:9",
        "ENABLE_OPENAI_API": off,
        **{
            f"ENABLE_{task}_GENERATION": off
            for task in (
                "TITLE",
                "FOLLOW_UP",
                "TAGS",
                "RETRIEVAL_QUERY",
                "SEARCH_QUERY",
                "AUTOCOMPLETE",
            )
        },
        "ENABLE_VERSION_UPDATE_CHECK": off,
        # New chats open on the showcase graph; suggestions are each graph's own example prompts
        # (the setup job writes them on the model entries), never Open WebUI's generic ones.
        "DEFAULT_MODELS": f"lgos.{SHOWCASE_GRAPH}",
        "DEFAULT_PROMPT_SUGGESTIONS": "[]",
        "TOOL_SERVER_CONNECTIONS": json.dumps([mcp]),
        # lgos_ui and service_kit from this checkout win over the copies `make dev` installed.
        "PYTHONPATH": UI_PYTHONPATH,
    }


def open_webui(ports: Ports) -> Component:
    return Component(
        name="open-webui",
        port=ports.open_webui,
        args=[
            *(str(OPEN_WEBUI_BIN), "serve"),
            *("--host", "127.0.0.1", "--port", str(ports.open_webui)),
        ],
        env=open_webui_env(ports),
        requires=(OPEN_WEBUI_BIN,),
        setup=jobs.prepare_open_webui,
        ready=jobs.install_open_webui_pipe,
        health_timeout=OPEN_WEBUI_HEALTH_TIMEOUT,
    )


def prometheus(ports: Ports) -> Component:
    """Scrapes every first-party ``/metrics`` (the config names the stack's ports)."""
    config = state_dir() / "prometheus.yml"
    return Component(
        name="prometheus",
        port=ports.prometheus,
        args=prometheus_command(ports.prometheus, config, state_dir() / "prometheus"),
        health_path="/-/ready",
        requires=(PROMETHEUS_BIN,),
        setup=jobs.write_prometheus_config,
    )


def phoenix(ports: Ports) -> Component:
    """The trace viewer: every first-party service sends its spans here when it runs
    (``traced``)."""
    return Component(
        name="phoenix",
        port=ports.phoenix,
        args=[str(PHOENIX_BIN), "serve"],
        env=phoenix_env(ports.phoenix, state_dir() / "phoenix"),
        health_path="/healthz",
        requires=(PHOENIX_BIN,),
        health_timeout=PHOENIX_HEALTH_TIMEOUT,
    )


TRACED = ("lgos", "lgos-2", "lgos-worker", "files", "gateway")
"""The services that export OpenTelemetry traces: the first-party ones and the LiteLLM gateway
(its own integration, which ``lgos-litellm-serve`` switches on by the same variables)."""
SERVICE_NAMES = {"gateway": "litellm"}
"""Service names on the spans where they differ from the component's name."""
TRACE_PROJECT = "lgos"
"""Phoenix's project the stack's spans land in (the resource attribute Phoenix reads)."""


def tracing_env(name: str, ports: Ports) -> dict[str, str]:
    """The standard OTEL_* variables pointing ``name``'s spans at the stack's Phoenix (OTLP/HTTP:
    the exporter appends /v1/traces to this base URL)."""
    return {
        "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{ports.phoenix}",
        "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
        "OTEL_SERVICE_NAME": SERVICE_NAMES.get(name, name),
        "OTEL_RESOURCE_ATTRIBUTES": f"openinference.project.name={TRACE_PROJECT}",
    }


def traced(plan: list[Component], ports: Ports) -> list[Component]:
    """With Phoenix in the plan, the traced services export to it; without it, nothing changes
    (OTEL_* set by the developer still reach every process)."""
    if not any(c.name == "phoenix" for c in plan):
        return plan
    return [
        dataclasses.replace(c, env={**c.env, **tracing_env(c.name, ports)})
        if c.name in TRACED
        else c
        for c in plan
    ]


COMPONENTS: tuple[Callable[[Ports], Component], ...] = (
    postgres,
    redis,
    searxng,
    embeddings,
    files,
    offline_model,
    prometheus,
    phoenix,
    lgos,
    lgos_second,
    lgos_worker,
    mcp_db,
    gateway,
    chainlit,
    open_webui,
)
"""The stack, in start order."""
OPT_IN = frozenset({"phoenix"})
"""Components started only when DEVSTACK_WITH names them (Phoenix: ≈ 14 s and ≈ 500 MB)."""


def components(ports: Ports) -> list[Component]:
    """The stack, in start order (each one's needs come before it)."""
    return [component(ports) for component in COMPONENTS]


def named(names: str) -> set[str]:
    return {name.strip() for name in names.split(",") if name.strip()}


def planned(ports: Ports) -> list[Component]:
    """The components to start: all of them but those DEVSTACK_SKIP names and the opt-in ones
    DEVSTACK_WITH does not name."""
    skip = named(os.environ.get("DEVSTACK_SKIP", ""))
    wanted = named(os.environ.get("DEVSTACK_WITH", ""))
    every = components(ports)
    for variable, names in (("DEVSTACK_SKIP", skip), ("DEVSTACK_WITH", wanted)):
        unknown = names - {c.name for c in every}
        if unknown:
            raise SystemExit(f"{variable} names no component: {', '.join(sorted(unknown))}")
    skip |= OPT_IN - wanted
    return traced([c for c in every if c.name not in skip], ports)
