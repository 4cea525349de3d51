"""The OpenAI error envelope: its exact shape, the response carrying it, the app handler."""

from __future__ import annotations

from dataclasses import dataclass

import httpx
import pytest
from fastapi import FastAPI
from service_kit.envelope import envelope, envelope_handler, error_response


@dataclass
class TeapotError(Exception):
    message: str = "No coffee here."
    status_code: int = 418
    type: str = "invalid_request_error"
    param: str | None = "cup"
    code: str | None = "teapot"


def test_the_envelope_has_the_four_fields_in_openai_order() -> None:
    body = envelope("Bad.", "invalid_request_error", code="bad")
    assert body == {
        "error": {"message": "Bad.", "type": "invalid_request_error", "param": None, "code": "bad"}
    }
    assert list(body["error"]) == ["message", "type", "param", "code"]


def test_the_error_response_carries_status_headers_and_compact_json() -> None:
    response = error_response(TeapotError(), headers={"WWW-Authenticate": "Bearer"})
    assert response.status_code == 418
    assert response.headers["content-type"] == "application/json"
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.body == (
        b'{"error":{"message":"No coffee here.","type":"invalid_request_error",'
        b'"param":"cup","code":"teapot"}}'
    )


def app_raising(error: Exception) -> FastAPI:
    app = FastAPI()
    app.add_exception_handler(type(error), envelope_handler)

    @app.get("/")
    async def fail() -> None:
        raise error

    return app


async def test_the_handler_answers_a_service_error_in_the_envelope() -> None:
    transport = httpx.ASGITransport(app=app_raising(TeapotError(param=None)))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        response = await client.get("/")
    assert response.status_code == 418
    assert response.json() == envelope("No coffee here.", "invalid_request_error", code="teapot")


async def test_the_handler_refuses_an_error_without_the_envelope_fields() -> None:
    transport = httpx.ASGITransport(app=app_raising(KeyError("plain")), raise_app_exceptions=True)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        with pytest.raises(TypeError, match="KeyError lacks the OpenAI error attributes"):
            await client.get("/")
