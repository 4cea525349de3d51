"""Real PostgreSQL and Redis for multi-process tests.

They come from LGOS_TEST_POSTGRES_URI / LGOS_TEST_REDIS_URL; the defaults are the servers this
machine kind runs on 127.0.0.1. Each user gets a fresh database, dropped afterwards.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psycopg

from tests.support.servers import Server

ADMIN_URI = os.environ.get(
    "LGOS_TEST_POSTGRES_URI", "postgresql://postgres@127.0.0.1:5432/postgres"
)
REDIS_URL = os.environ.get("LGOS_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")


@contextmanager
def fresh_database() -> Iterator[str]:
    name = f"lgos_it_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(ADMIN_URI, autocommit=True) as admin:
        admin.execute(f'CREATE DATABASE "{name}"')
    base = ADMIN_URI.rsplit("/", 1)[0]
    try:
        yield f"{base}/{name}"
    finally:
        with psycopg.connect(ADMIN_URI, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def shared_env(
    postgres_uri: str, offline_model: Server, tmp: Path, lease_ttl: float
) -> dict[str, str]:
    """Settings for LGOS processes that share one PostgreSQL database and one Redis."""
    return {
        "LGOS_POSTGRES_URI": postgres_uri,
        "LGOS_REDIS_URL": REDIS_URL,
        "LGOS_LEASE_TTL": str(lease_ttl),
        "LGOS_STATE_DIR": str(tmp),
        "DEMO_API_OFFLINE_MODEL_URL": f"{offline_model.url}/v1",
    }
