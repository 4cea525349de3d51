"""The app factory: the Files API and vector stores over one storage backend and PostgreSQL."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI
from service_kit import metrics
from service_kit.limits import BodyLimit
from service_kit.openapi import install as install_openapi
from service_kit.request_context import install as install_request_context
from service_kit.tracing import FASTAPI_TELEMETRY

from files_service import openapi
from files_service.errors import install_error_handlers
from files_service.nul_guard import NulGuard
from files_service.routes import files, vector_stores
from files_service.settings import FilesSettings
from files_service.state import FilesState
from files_service.uploads import JSON_BODY_LIMIT, upload_limit


def create_app(settings: FilesSettings | None = None, state: FilesState | None = None) -> FastAPI:
    settings = settings or FilesSettings()
    state = state or FilesState.from_settings(settings)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await state.open()
        try:
            yield
        finally:
            await state.aclose()
            metrics.mark_process_dead()

    app = FastAPI(
        title="LGOS Files service", version="0.1.0", lifespan=lifespan, telemetry=FASTAPI_TELEMETRY
    )
    app.state.files = state
    app.include_router(files.router)
    app.include_router(vector_stores.router)
    routes = upload_limit(settings.max_upload_bytes)
    app.add_middleware(BodyLimit, default=JSON_BODY_LIMIT, routes=routes)
    app.add_middleware(NulGuard)

    @app.get("/health", tags=["health"])
    async def health() -> dict[str, Any]:
        # Healthy means the metadata database answers, not just that the process is up.
        async with state.pool.connection() as conn:
            await conn.execute("SELECT 1")
        return {
            "status": "ok",
            "storage": settings.storage,
            "semantic_search": settings.embeddings_url is not None,
        }

    install_error_handlers(app)
    install_openapi(app, openapi.describe)
    install_request_context(app, service="files")
    metrics.set_enabled(settings.metrics_enabled)
    if settings.metrics_enabled:
        metrics.install_route(app, (functools.partial(_indexing_readings, state),))
    return app


async def _indexing_readings(state: FilesState) -> metrics.Readings:
    """The indexing backlog, read at scrape time."""
    async with state.pool.connection() as conn:
        cursor = await conn.execute(
            "SELECT count(*) AS backlog FROM vector_store_files WHERE status = 'in_progress'"
        )
        row = await cursor.fetchone()
    backlog = int(row["backlog"]) if row else 0
    return {"files_indexing_backlog": ("Vector store files waiting to be indexed.", backlog)}
