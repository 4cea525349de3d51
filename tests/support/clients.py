"""The one way tests build the official SDK: strict response validation, no retries."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from lgos import ScopeResolver, shared_scope
from openai import AsyncOpenAI, OpenAI
from starlette.requests import Request


def sdk_client(
    base_url: str, http_client: httpx.AsyncClient | None = None, *, api_key: str = "not-checked"
) -> AsyncOpenAI:
    return AsyncOpenAI(
        base_url=base_url,
        api_key=api_key,
        http_client=http_client,
        max_retries=0,
        _strict_response_validation=True,
    )


def sdk_fixture(
    server: str, pick: Callable[[Any], Any] = lambda found: found, *, api_key: str = "not-checked"
) -> Any:
    """A per-test fixture: the SDK against ``pick(<the fixture named server>)``, a process with a
    ``url``. In a module, ``client = sdk_fixture("lgos")`` names it ``client``."""

    async def connected(**found: Any) -> AsyncIterator[AsyncOpenAI]:
        async with sdk_client(f"{pick(found[server]).url}/v1", api_key=api_key) as sdk:
            yield sdk

    return _fixture_needing(server, connected)


def sdk_pair_fixture(servers: str, pick: Callable[[Any], Any] = lambda found: found) -> Any:
    """Like ``sdk_fixture`` for two processes: ``pick(<the fixture named servers>)`` is a pair,
    the fixture a tuple of two SDKs, one against each."""

    async def connected(**found: Any) -> AsyncIterator[tuple[AsyncOpenAI, ...]]:
        a, b = pick(found[servers])
        async with sdk_client(f"{a.url}/v1") as first, sdk_client(f"{b.url}/v1") as second:
            yield first, second

    return _fixture_needing(servers, connected)


def _fixture_needing(name: str, function: Callable[..., Any]) -> Any:
    # A signature naming the fixture ``name`` makes pytest set it up first, as for a parameter
    # written out (asking for it from inside a running async fixture would not work).
    parameter = inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY)
    function.__signature__ = inspect.Signature([parameter])  # type: ignore[attr-defined]
    return pytest.fixture(function)


def sync_sdk_client(base_url: str, *, api_key: str = "not-checked") -> OpenAI:
    """The blocking SDK, for a test thread that feeds an upload body at its own pace."""
    return OpenAI(
        base_url=base_url, api_key=api_key, max_retries=0, _strict_response_validation=True
    )


def tenant_header(request: Request) -> str:
    """A scope resolver for tests. It stands for authenticated state: a real deployment never
    takes the scope from what the caller sends."""
    return request.headers.get("x-test-tenant", "none")


@asynccontextmanager
async def embedded_lgos(
    state_dir: Path, *, scope_resolver: ScopeResolver = shared_scope, **settings: Any
) -> AsyncIterator[AsyncOpenAI]:
    """The SDK against an in-process LGOS serving the test graphs with these settings."""
    from lgos import LGOSSettings, create_app

    from tests.support.graphs import create_registry

    settled = LGOSSettings(state_dir=state_dir, **settings)
    app = create_app(create_registry(), settled, scope_resolver=scope_resolver)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://lgos.test") as http:
            yield sdk_client("http://lgos.test/v1", http)
    finally:
        await app.state.lgos.aclose()
