"""The official SDK against LGOS serving the test graphs, on each engine a contract runs on.

- ``asgi``: the in-process app (``lgos_app``) through httpx's ASGI transport;
- ``socket``: the same registry in an ``lgos serve`` process (``lgos_server``);
- ``queue``: the queue-backed background engine, API and worker processes over PostgreSQL and
  Redis (``queue_engine``, tests/support/queue_engine.py).

A test module picks its engines by parametrising a fixture with these names; the servers behind
an engine start only when a test asks for it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from openai import AsyncOpenAI

from tests.support.clients import sdk_client

IN_PROCESS = ("asgi", "socket")
"""The embedded engine (in-process background backend, in-process coordinator)."""
ALL_ENGINES = (*IN_PROCESS, "queue")

PING_INTERVAL = 0.3
"""The SSE keep-alive interval of the ``asgi`` and ``socket`` servers."""


@asynccontextmanager
async def engine_client(request: pytest.FixtureRequest, engine: str) -> AsyncIterator[AsyncOpenAI]:
    if engine == "asgi":
        transport = httpx.ASGITransport(app=request.getfixturevalue("lgos_app"))
        async with httpx.AsyncClient(transport=transport, base_url="http://lgos.test") as http:
            yield sdk_client("http://lgos.test/v1", http)
        return
    if engine == "socket":
        url = request.getfixturevalue("lgos_server").url
    elif engine == "queue":
        url = request.getfixturevalue("queue_engine").apis[0].url
    else:
        raise ValueError(f"unknown engine {engine!r}")
    async with sdk_client(f"{url}/v1") as sdk:
        yield sdk
