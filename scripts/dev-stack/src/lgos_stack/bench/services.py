"""The benchmarks' shared services: a scratch PostgreSQL database on the machine's server, and
advanced-graph's services (offline-model, SearXNG, the Files service with a knowledge store)."""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import httpx
import psycopg

from lgos_stack.ports import free_port
from lgos_stack.processes import serve
from lgos_stack.servers import serve_searxng

ADMIN_URI = os.environ.get(
    "LGOS_BENCH_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("LGOS_BENCH_REDIS_URL", "redis://127.0.0.1:6379/14")
API_KEY = "sk-bench-files"
"""The Files service's key in the benchmarks' private stacks."""


@contextmanager
def database(admin_uri: str = ADMIN_URI, prefix: str = "lgos_bench") -> Iterator[str]:
    """A fresh database on ``admin_uri``'s server (its URI), dropped afterwards."""
    name = f"{prefix}_{uuid.uuid4().hex[:10]}"
    with psycopg.connect(admin_uri, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    try:
        yield f"{admin_uri.rsplit('/', 1)[0]}/{name}"
    finally:
        with psycopg.connect(admin_uri, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@contextmanager
def services(state: Path) -> Iterator[dict[str, str]]:
    """offline-model, SearXNG, the Files service with a knowledge store: the graph's env."""
    with ExitStack() as stack:
        model_port, files_port = free_port(), free_port()
        model = stack.enter_context(
            serve(
                ["offline_model", "--port", str(model_port)],
                port=model_port,
                env={},
                log=state / "model.log",
            )
        )
        searxng = stack.enter_context(serve_searxng(state))
        postgres = stack.enter_context(database())
        files = stack.enter_context(
            serve(
                ["files_service"],
                port=files_port,
                env={
                    "FILES_PORT": str(files_port),
                    "FILES_POSTGRES_URI": postgres,
                    "FILES_STORAGE_DIR": str(state / "files"),
                    "FILES_API_KEYS": API_KEY,
                },
                log=state / "files.log",
            )
        )
        store = httpx.post(
            f"{files.url}/v1/vector_stores",
            json={"name": "bench-knowledge"},
            headers={"Authorization": f"Bearer {API_KEY}"},
        ).json()["id"]
        yield {
            "DEMO_API_OFFLINE_MODEL_URL": f"{model.url}/v1",
            "DEMO_API_WEB_SEARCH_URL": searxng.url,
            "DEMO_API_FILES_BASE_URL": f"{files.url}/v1",
            "DEMO_API_FILES_API_KEY": API_KEY,
            "DEMO_API_VECTOR_STORE_ID": store,
        }
