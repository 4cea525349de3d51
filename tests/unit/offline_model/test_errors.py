"""Every failure of offline-model is answered in the OpenAI envelope by the app's handlers."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from offline_model.app import create_app
from offline_model.errors import RequestError
from offline_model.settings import OfflineModelSettings


@pytest.fixture
async def client() -> AsyncIterator[httpx.AsyncClient]:
    app = create_app(OfflineModelSettings(max_request_bytes=64))

    @app.get("/broken")
    async def broken() -> None:
        raise RuntimeError("secret detail")

    transport = httpx.ASGITransport(app=app, raise_app_exceptions=False)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield client


def test_the_error_type_follows_the_status() -> None:
    assert RequestError("x").type == "invalid_request_error"
    assert RequestError("x", status_code=413).type == "invalid_request_error"
    assert RequestError("x", status_code=503).type == "server_error"


async def test_unknown_routes_and_methods_are_envelopes(client: httpx.AsyncClient) -> None:
    missing = await client.get("/v1/nothing")
    assert missing.status_code == 404
    assert missing.json() == {
        "error": {
            "message": "Not Found",
            "type": "invalid_request_error",
            "param": None,
            "code": None,
        }
    }
    wrong = await client.delete("/v1/models")
    assert wrong.status_code == 405
    assert wrong.json()["error"]["message"] == "Method Not Allowed"


async def test_a_request_error_is_answered_as_raised(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/chat/completions", content=b"[]")
    assert response.status_code == 400
    assert response.json()["error"]["message"] == "The request body must be a JSON object."


async def test_a_body_over_the_limit_is_413(client: httpx.AsyncClient) -> None:
    response = await client.post("/v1/chat/completions", content=b"{" + b" " * 64 + b"}")
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["message"] == "The request body exceeds the limit of 64 bytes."
    assert (error["type"], error["code"]) == ("invalid_request_error", "request_too_large")


async def test_an_unexpected_failure_is_a_bare_500(client: httpx.AsyncClient) -> None:
    response = await client.get("/broken")
    assert response.status_code == 500
    error = response.json()["error"]
    assert (error["message"], error["type"]) == ("Internal server error", "server_error")
    assert error["param"] is error["code"] is None
    assert "secret" not in response.text
