"""A service's own OpenAPI document in place of the one FastAPI generates.

The services answer validation errors with 400 envelopes, so FastAPI's 422 schemas are dropped
from the base document; each service then describes its real statuses and bodies.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from fastapi.openapi.utils import get_openapi

Document = dict[str, Any]


def base_document(app: FastAPI) -> Document:
    """FastAPI's document for ``app`` without ``HTTPValidationError`` and ``ValidationError``."""
    document = get_openapi(title=app.title, version=app.version, routes=app.routes)
    schemas: dict[str, Any] = document.setdefault("components", {}).setdefault("schemas", {})
    for name in ("HTTPValidationError", "ValidationError"):
        schemas.pop(name, None)
    return document


def install(app: FastAPI, describe: Callable[[FastAPI], Document]) -> None:
    """Serve ``describe(app)`` as the document, built once on first use."""

    def build() -> Document:
        if app.openapi_schema is None:
            app.openapi_schema = describe(app)
        return app.openapi_schema

    setattr(app, "openapi", build)  # noqa: B010 - FastAPI's documented override
