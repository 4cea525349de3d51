"""The fuzz tier's servers: LGOS in its deployed shape (PostgreSQL, Redis, distributed engine)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import schemathesis
from schemathesis import HookContext

from tests.support.servers import Server, serve_lgos
from tests.support.shared_state import REDIS_URL, fresh_database

# Message framing belongs to the HTTP layer (service_kit.framing answers garbled framing with an
# envelope; tests/fuzz/test_http_framing.py covers it on raw sockets), and a generated
# Content-Length or Transfer-Encoding would only desynchronise the body schemathesis sends.
FRAMING_HEADERS = frozenset(
    {
        "content-length",
        "transfer-encoding",
        "host",
        "connection",
        "expect",
        "te",
        "trailer",
        "upgrade",
        "content-type",
    }
)


@schemathesis.hook
def map_headers(context: HookContext, headers: dict[str, Any] | None) -> dict[str, Any] | None:
    if headers is None:
        return None
    return {k: v for k, v in headers.items() if k.lower() not in FRAMING_HEADERS}


@pytest.fixture(scope="session")
def postgres_uri() -> Iterator[str]:
    with fresh_database() as uri:
        yield uri


@pytest.fixture(scope="session")
def fuzzed_lgos(
    graph_env: dict[str, str], postgres_uri: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    queue = f"lgos-fuzz:{uuid.uuid4().hex[:12]}"
    env = {
        **graph_env,
        # The deployed shape: checkpoints, Store and background records in PostgreSQL (which
        # holds no NUL character), leases and dispatch on Redis.
        "LGOS_POSTGRES_URI": postgres_uri,
        "LGOS_REDIS_URL": REDIS_URL,
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": queue,
        "LGOS_STATE_DIR": str(tmp_path_factory.mktemp("fuzz-lgos-state")),
        "DEMO_API_REPORT_STEP_SECONDS": "0.01",
    }
    log = tmp_path_factory.mktemp("logs") / "lgos-fuzz.log"
    # The demo registry: what users run, with no graph that fails on purpose.
    with serve_lgos(
        "serve", "lgos_demo_graphs.registry:create_registry", env=env, log=log
    ) as server:
        yield server
    redis.Redis.from_url(REDIS_URL).delete(queue)
