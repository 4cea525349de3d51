"""The stack's setup steps: what runs before a component starts (or once it is healthy), each
after every earlier component is healthy."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys
from pathlib import Path

from lgos_stack.keys import files_key, gateway_key, lgos_key, open_webui_admin
from lgos_stack.model import Component, Stack
from lgos_stack.paths import CHAINLIT_DIR, OPEN_WEBUI_INSTALLER, ROOT, pg_data, state_dir
from lgos_stack.ports import Ports, postgres_url
from lgos_stack.processes import demote, ensure_service_user
from lgos_stack.servers import initdb_command, prometheus_config, searxng_settings


def run_job(what: str, module: str, *args: str, env: dict[str, str] | None = None) -> None:
    """A one-shot job (``python -m module``, or a script path) logged to the state folder."""
    command = [sys.executable, module] if module.endswith(".py") else [sys.executable, "-m", module]
    log = state_dir() / f"{what}.log"
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


def init_postgres(component: Component, stack: Stack) -> None:
    user = ensure_service_user()
    data = pg_data()
    if (data / "PG_VERSION").exists():
        return
    data.mkdir(parents=True, exist_ok=True)
    if user is not None:
        os.chown(data, *user)
    subprocess.run(
        initdb_command(data, "-E", "UTF8", "--no-instructions"),
        check=True,
        stdout=subprocess.DEVNULL,
        preexec_fn=demote(user),
    )


def render_searxng_settings(component: Component, stack: Stack) -> None:
    """SearXNG's settings (absolute engine path, port, a fresh secret) in the state folder."""
    searxng_settings(component.port, state_dir() / "searxng-settings.yml")


def write_prometheus_config(component: Component, stack: Stack) -> None:
    """Prometheus's config in the state folder: every first-party ``/metrics`` at the stack's
    ports, scraped every 2 s (a request shows within seconds)."""
    ports = stack.ports
    scrapes = {
        "lgos": ports.lgos,
        "lgos-2": ports.lgos_second,
        "lgos-worker": ports.lgos_worker,
        "files": ports.files,
    }
    (state_dir() / "prometheus.yml").write_text(prometheus_config(scrapes))


def prepare_mcp_db(component: Component, stack: Stack) -> None:
    """The demo schema and its read-only role in the stack's PostgreSQL, and dbhub's config."""
    run_job(
        "mcp-db-setup",
        "lgos_gateways.mcp_demo_db",
        "--admin-url",
        postgres_url(stack.ports.postgres),
        "--dbhub-config",
        str(state_dir() / "dbhub.toml"),
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
    id_file = state_dir() / "knowledge-vector-store-id"
    run_job(
        "knowledge-setup",
        "lgos_demo_graphs.advanced.knowledge_setup",
        "--id-file",
        str(id_file),
        env=knowledge_env(stack.ports),
    )
    stack.env["DEMO_API_VECTOR_STORE_ID"] = id_file.read_text().strip()


def lgos_ports(stack: Stack) -> list[int]:
    """The LGOS instances the gateway routes to: those the stack runs (DEVSTACK_SKIP may leave
    out the second)."""
    skipped = {name.strip() for name in os.environ.get("DEVSTACK_SKIP", "").split(",")}
    second = [] if "lgos-2" in skipped else [stack.ports.lgos_second]
    return [stack.ports.lgos, *second]


def litellm_sync(stack: Stack, *extra: str) -> None:
    """Publish LGOS's catalog into the LiteLLM config the stack serves."""
    run_job(
        "gateway-sync",
        "lgos_gateways.litellm_sync",
        "--lgos-url",
        f"http://127.0.0.1:{stack.ports.lgos}",
        # Both instances: one deployment each under every graph's model name.
        "--upstream-url",
        ",".join(f"http://127.0.0.1:{port}/v1" for port in lgos_ports(stack)),
        "--config",
        str(state_dir() / "litellm.yaml"),
        # LiteLLM reads the key from its own environment; the config names only the variable.
        "--upstream-key",
        "os.environ/LGOS_API_KEY",
        *extra,
        env={"LGOS_API_KEY": lgos_key(), "OPENAI_GATEWAY_API_KEY": gateway_key()},
    )


def sync_gateway_catalog(component: Component, stack: Stack) -> None:
    """LGOS is healthy by now (components start in order): publish its catalog to LiteLLM."""
    # --reseed: each start serves gateways/litellm/config.yaml as it is now, so edits and updates
    # to the operator file are never shadowed by the served copy in the state folder.
    litellm_sync(stack, "--reseed")


def resync_gateway_catalog(stack: Stack) -> None:
    """A running stack's catalog sync: rewrite the config, restart LiteLLM when it changed and
    return once the gateway serves every graph."""
    litellm_sync(
        stack,
        *("--reload-pid-file", str(state_dir() / "litellm.pid")),
        *("--gateway-url", f"http://127.0.0.1:{stack.ports.gateway}"),
    )


def keep_secret(stack: Stack, variable: str, filename: str) -> None:
    """``variable`` from the environment, else a random secret kept in the state folder's
    ``filename`` (so sessions it signs survive a restart), handed to every later component."""
    secret = state_dir() / filename
    if not os.environ.get(variable) and not secret.exists():
        secret.write_text(secrets.token_urlsafe(48))
        secret.chmod(0o600)
    stack.env.setdefault(variable, os.environ.get(variable) or secret.read_text())


def prepare_chainlit(component: Component, stack: Stack) -> None:
    """A login-token secret kept across restarts, so sessions survive a restart of the app (the
    app creates its own database and tables in the stack's PostgreSQL), and the app's own root
    folder in this stack's state (:func:`chainlit_app_root`)."""
    keep_secret(stack, "CHAINLIT_AUTH_SECRET", "chainlit-auth-secret")
    root = chainlit_app_root()
    root.mkdir(exist_ok=True)
    for name in CHAINLIT_APP_FILES:
        link = root / name
        link.unlink(missing_ok=True)  # the link an earlier start left
        link.symlink_to(CHAINLIT_DIR / name)


CHAINLIT_APP_FILES = (".chainlit", "public", "chainlit.md")
"""What Chainlit reads from its app root: its settings and translations, assets, the readme."""


def chainlit_app_root() -> Path:
    """Chainlit's app root for this stack: links to the checkout's settings, assets and readme,
    beside the ``.files`` folder Chainlit keeps uploads in. Chainlit deletes that whole folder
    when it stops, so two stacks (``make dev`` and a test's) sharing ``ui/chainlit`` as their
    root would each delete the other's uploads in flight."""
    return state_dir() / "chainlit-app"


def prepare_open_webui(component: Component, stack: Stack) -> None:
    """Open WebUI's data folder and session-signing secret, kept across restarts."""
    (state_dir() / "open-webui").mkdir(exist_ok=True)
    keep_secret(stack, "WEBUI_SECRET_KEY", "open-webui-secret")


def install_open_webui_pipe(component: Component, stack: Stack) -> None:
    """Open WebUI answers: install or update the LGOS pipe and its model entries."""
    sync_open_webui_models(stack)


def sync_open_webui_models(stack: Stack) -> None:
    """Install or update the LGOS pipe and keep one model entry per graph of the gateway's
    catalog (Open WebUI writes descriptions only through its admin API, not from the pipe)."""
    run_job(
        "open-webui-setup",
        str(OPEN_WEBUI_INSTALLER),
        "--url",
        f"http://127.0.0.1:{stack.ports.open_webui}",
        "--gateway-url",
        f"http://127.0.0.1:{stack.ports.gateway}/v1",
        env={**open_webui_admin(), "OPENAI_GATEWAY_API_KEY": gateway_key()},
    )
