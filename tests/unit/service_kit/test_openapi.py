"""The OpenAPI hook: FastAPI's document without its 422 schemas, a service's own document
served in its place and built once."""

from __future__ import annotations

from typing import Any

import httpx
from fastapi import FastAPI
from pydantic import BaseModel
from service_kit.openapi import Document, base_document, install


class Item(BaseModel):
    name: str


def make_app() -> FastAPI:
    app = FastAPI(title="kit", version="9.9")

    @app.post("/items")
    async def create(item: Item) -> dict[str, Any]:
        return item.model_dump()

    return app


def test_the_base_document_drops_only_fastapis_validation_schemas() -> None:
    app = make_app()
    generated = app.openapi()["components"]["schemas"]
    assert {"HTTPValidationError", "ValidationError", "Item"} <= set(generated)
    document = base_document(make_app())
    assert document["info"] == {"title": "kit", "version": "9.9"}
    assert set(document["components"]["schemas"]) == {"Item"}
    assert "/items" in document["paths"]


def test_a_bare_app_gets_an_empty_schema_table() -> None:
    document = base_document(FastAPI())
    assert document["components"]["schemas"] == {}


async def test_the_installed_document_is_served_and_built_once() -> None:
    app = make_app()
    calls: list[FastAPI] = []

    def describe(described: FastAPI) -> Document:
        calls.append(described)
        document = base_document(described)
        document["info"]["description"] = "described"
        return document

    install(app, describe)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        served = (await client.get("/openapi.json")).json()
        again = (await client.get("/openapi.json")).json()
    assert served == again == app.openapi()
    assert served["info"]["description"] == "described"
    assert calls == [app]
