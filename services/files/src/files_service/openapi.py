"""The OpenAPI document: the upload form FastAPI cannot see, and the statuses each route answers.

``POST /v1/files`` reads its multipart form by hand (to stream and bound it), so its body is
described here; FastAPI's 422 is dropped everywhere because validation errors are 400s in the
OpenAI envelope.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI
from service_kit.openapi import base_document

from files_service.routes.files import PURPOSES

_REASONS = {
    400: "Invalid request (the envelope names the parameter).",
    401: "Missing or unknown API key (when FILES_API_KEYS is set).",
    404: "No such file, vector store or attachment (or not a well-formed id).",
    413: "The upload exceeds FILES_MAX_UPLOAD_BYTES, or a JSON body exceeds 1 MiB.",
    422: "The Idempotency-Key names another upload's file, or one that has expired.",
    502: "The embeddings endpoint failed (semantic search only).",
}
_IDEMPOTENCY_KEY = {
    "name": "Idempotency-Key",
    "in": "header",
    "required": False,
    "description": "A retry with the same key and the same upload gets the file it recorded.",
    "schema": {"type": "string", "minLength": 1, "maxLength": 255},
}
_ERROR = {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}}
_ENVELOPE = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["message", "type", "param", "code"],
            "properties": {
                "message": {"type": "string"},
                "type": {"type": "string"},
                "param": {"type": ["string", "null"]},
                "code": {"type": ["string", "null"]},
            },
        }
    },
}
_UPLOAD = {
    "required": True,
    "content": {
        "multipart/form-data": {
            "schema": {
                "type": "object",
                "required": ["file", "purpose"],
                "properties": {
                    "file": {"type": "string", "format": "binary"},
                    "purpose": {"type": "string", "enum": sorted(PURPOSES)},
                    "expires_after[anchor]": {"type": "string", "enum": ["created_at"]},
                    "expires_after[seconds]": {
                        "type": "integer",
                        "minimum": 3600,
                        "maximum": 2592000,
                    },
                },
            }
        }
    },
}


def statuses(method: str, path: str) -> tuple[int, ...]:
    """What a route answers besides 200 (asserted by the schema fuzzer)."""
    if path == "/health":
        return ()
    found: tuple[int, ...] = (401,) if path in ("/v1/files", "/v1/vector_stores") else (401, 404)
    if method == "post" and path == "/v1/files":
        return (400, 401, 413, 422)
    if method == "post" and path == "/v1/vector_stores":
        found = (401, 404)  # file_ids that name no file
    if method in ("post", "get"):
        found = (400, *found)
    if method == "post":
        found = (*found, 413)
    if path.endswith("/search"):
        found = (*found, 502)
    return tuple(sorted(set(found)))


def describe(app: FastAPI) -> dict[str, Any]:
    document = base_document(app)
    document["components"]["schemas"]["ErrorEnvelope"] = _ENVELOPE
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            if method == "post" and path == "/v1/files":
                operation["requestBody"] = _UPLOAD
                operation["parameters"] = [_IDEMPOTENCY_KEY]
            ok = operation.get("responses", {}).get("200", {"description": "OK"})
            operation["responses"] = {"200": ok} | {
                str(status): {"description": _REASONS[status], "content": _ERROR}
                for status in statuses(method, path)
            }
            if path != "/health":
                operation["security"] = [{"bearer": []}]
    document["components"]["securitySchemes"] = {"bearer": {"type": "http", "scheme": "bearer"}}
    return document
