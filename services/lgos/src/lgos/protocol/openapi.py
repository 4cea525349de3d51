"""The OpenAPI document: LGOS's supported request subset and the statuses each route returns.

The request bodies are the models in ``schema``.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel, TypeAdapter
from service_kit.openapi import base_document

from lgos.protocol.schema import ChatRequest, ResponsesRequest


class ErrorObject(BaseModel):
    message: str
    type: str
    param: str | None
    code: str | None


class ErrorEnvelope(BaseModel):
    """Every error, on every route: OpenAI's envelope."""

    error: ErrorObject


_REASONS = {
    400: "Invalid request (the envelope names the parameter).",
    401: "Missing or wrong API key (only when LGOS_API_KEYS is set).",
    404: "Unknown model, or a Response id that is unknown, foreground or another scope's.",
    409: "Interrupt state conflict or a busy run.",
    413: "The body exceeds LGOS_MAX_REQUEST_BYTES.",
    422: "An Idempotency-Key reused with a different request.",
    500: "A graph failed; details are only in the logs.",
}
ROUTE_STATUSES: dict[tuple[str, str], tuple[int, ...]] = {
    ("get", "/health"): (),
    ("get", "/v1/models"): (401,),
    ("get", "/v1/models/{model}"): (401, 404),
    ("post", "/v1/responses"): (400, 401, 404, 409, 413, 422, 500),
    ("get", "/v1/responses/{response_id}"): (401, 404),
    ("post", "/v1/responses/{response_id}/cancel"): (401, 404, 413),
    ("post", "/v1/chat/completions"): (400, 401, 404, 413, 500),
}
"""The statuses each route really answers besides 200 (asserted by the schema fuzzer)."""

_BODIES: dict[tuple[str, str], type[BaseModel]] = {
    ("post", "/v1/responses"): ResponsesRequest,
    ("post", "/v1/chat/completions"): ChatRequest,
}
_STREAMS = {("post", "/v1/responses"), ("post", "/v1/chat/completions")}


def describe(app: FastAPI) -> dict[str, Any]:
    document = base_document(app)  # without FastAPI's 422: LGOS answers validation with 400
    schemas: dict[str, Any] = document["components"]["schemas"]
    schemas.update(_component(ErrorEnvelope))
    for model in _BODIES.values():
        schemas.update(_component(model))
    for path, operations in document["paths"].items():
        documented = path.replace("{model:path}", "{model}")
        for method, operation in operations.items():
            key = (method, documented)
            if key in _BODIES:
                ref = {"$ref": f"#/components/schemas/{_BODIES[key].__name__}"}
                operation["requestBody"] = {
                    "required": True,
                    "content": {"application/json": {"schema": ref}},
                }
            operation["responses"] = _responses(key)
    return document


def _responses(key: tuple[str, str]) -> dict[str, Any]:
    ok: dict[str, Any] = {"application/json": {"schema": {"type": "object"}}}
    if key in _STREAMS:
        ok["text/event-stream"] = {"schema": {"type": "string"}}
    responses: dict[str, Any] = {"200": {"description": "OK", "content": ok}}
    error = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
    for status in ROUTE_STATUSES.get(key, ()):
        responses[str(status)] = {"description": _REASONS[status], "content": error}
    return responses


def _component(model: type[BaseModel]) -> dict[str, Any]:
    schema = TypeAdapter(model).json_schema(ref_template="#/components/schemas/{model}")
    definitions: dict[str, Any] = schema.pop("$defs", {})
    return {**definitions, model.__name__: schema}
