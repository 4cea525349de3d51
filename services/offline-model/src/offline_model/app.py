"""HTTP surface: Chat Completions and Responses, streaming and not, with usage and tool calls."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException
from starlette.responses import Response

from offline_model import chat, responses
from offline_model.answer import MODEL_NAME
from offline_model.http import RequestError, error, json_response
from offline_model.limits import BodySizeLimit
from offline_model.settings import OfflineModelSettings

logger = logging.getLogger("offline_model.app")


def create_app(settings: OfflineModelSettings | None = None) -> FastAPI:
    settings = settings or OfflineModelSettings()
    app = FastAPI(title="offline-model (deterministic stand-in)")
    app.state.token_delay = settings.token_delay
    app.include_router(chat.router)
    app.include_router(responses.router)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok", "model": MODEL_NAME}

    @app.get("/v1/models")
    async def models() -> Response:
        entry = {
            "id": MODEL_NAME,
            "object": "model",
            "created": 0,
            "owned_by": "offline-model (deterministic stand-in)",
        }
        return json_response({"object": "list", "data": [entry]})

    app.add_middleware(BodySizeLimit, max_bytes=settings.max_request_bytes)
    _install_error_handlers(app)
    return app


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(RequestError)
    async def request_error(request: Request, exc: RequestError) -> Response:
        return exc.response()

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        return error("Invalid request.")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        if exc.status_code >= 500:
            return error("Internal server error", status_code=exc.status_code)
        return error(str(exc.detail), status_code=exc.status_code)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        logger.error("unhandled error", exc_info=exc)
        return error("Internal server error", status_code=500)
