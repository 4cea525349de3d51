"""HTTP surface: Chat Completions and Responses, streaming and not, with usage and tool calls."""

from __future__ import annotations

import functools

from fastapi import FastAPI
from service_kit.limits import BodyLimit, Limit
from service_kit.request_context import install as install_request_context
from service_kit.responses import JSONResponse
from service_kit.tracing import FASTAPI_TELEMETRY
from starlette.responses import Response

from offline_model import chat, responses
from offline_model.answer import MODEL_NAME
from offline_model.errors import EXCEPTION_HANDLERS, too_large
from offline_model.settings import OfflineModelSettings


def create_app(settings: OfflineModelSettings | None = None) -> FastAPI:
    settings = settings or OfflineModelSettings()
    app = FastAPI(
        title="offline-model (deterministic stand-in)",
        exception_handlers=EXCEPTION_HANDLERS,
        telemetry=FASTAPI_TELEMETRY,
    )
    app.state.token_delay = settings.token_delay
    app.state.echo = settings.echo
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
        return JSONResponse({"object": "list", "data": [entry]})

    limit = settings.max_request_bytes
    app.add_middleware(BodyLimit, default=Limit(limit, functools.partial(too_large, limit)))
    install_request_context(app)
    return app
