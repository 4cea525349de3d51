"""The gateway key: missing or wrong keys get OpenAI-shaped 401s on every route, not 500/400."""

from __future__ import annotations

import httpx
import openai
import pytest

from tests.support.clients import sdk_client
from tests.support.gateways import GATEWAY_KEY
from tests.support.servers import Server

ROUTES = [
    ("GET", "/v1/models", None),
    ("GET", "/model/info", None),
    ("POST", "/v1/responses", {"model": "lgos/simple-graph", "input": "hi"}),
    (
        "POST",
        "/v1/chat/completions",
        {"model": "lgos/simple-graph", "messages": [{"role": "user", "content": "hi"}]},
    ),
]


@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer sk-wrong"}], ids=["none", "wrong"]
)
@pytest.mark.parametrize(("method", "path", "body"), ROUTES, ids=[r[1] for r in ROUTES])
def test_missing_or_wrong_key_is_401(
    litellm_gateway: Server,
    headers: dict[str, str],
    method: str,
    path: str,
    body: dict[str, object] | None,
) -> None:
    response = httpx.request(
        method, f"{litellm_gateway.url}{path}", headers=headers, json=body, timeout=30.0
    )
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "auth_error"


@pytest.mark.asyncio
async def test_sdk_sees_authentication_errors(litellm_gateway: Server) -> None:
    async with sdk_client(f"{litellm_gateway.url}/v1", api_key="sk-wrong") as wrong:
        with pytest.raises(openai.AuthenticationError):
            await wrong.models.list()
        with pytest.raises(openai.AuthenticationError):
            await wrong.responses.create(model="lgos/simple-graph", input="hi")


def test_the_key_also_works_as_litellm_header(litellm_gateway: Server) -> None:
    response = httpx.get(
        f"{litellm_gateway.url}/v1/models", headers={"x-litellm-api-key": GATEWAY_KEY}
    )
    assert response.status_code == 200
    assert "lgos/simple-graph" in {m["id"] for m in response.json()["data"]}
