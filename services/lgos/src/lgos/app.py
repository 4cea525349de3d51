"""The app factory: one FastAPI app serving a registry of graphs."""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from langgraph.pregel import Pregel
from service_kit import metrics
from service_kit.direct_routes import serve_directly
from service_kit.envelope import envelope_handler, error_response
from service_kit.limits import BodyLimit, Limit
from service_kit.openapi import install as install_openapi
from service_kit.request_context import install as install_request_context
from service_kit.responses import JSONResponse
from service_kit.tracing import FASTAPI_TELEMETRY
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect
from starlette.responses import Response

from lgos.auth import APIKeyAuth, trusted_resolver
from lgos.background.factory import open_backend
from lgos.config import GraphFeature, GraphRegistry
from lgos.errors import (
    ErrorType,
    InternalServerError,
    LGOSError,
    RequestTooLargeError,
    ServiceUnavailableError,
    error_envelope,
)
from lgos.interrupts.pending import TIMEOUT_MS, pending_runs
from lgos.interrupts.runs import SecondInterruptError
from lgos.interrupts.sweep import sweep_forever
from lgos.loop_lag import probe_loop_lag
from lgos.outages import is_outage
from lgos.protocol import openapi
from lgos.protocol.chat.routes import create_chat_completion
from lgos.protocol.chat.routes import router as chat_router
from lgos.protocol.models import router as models_router
from lgos.protocol.responses.background import execute_job
from lgos.protocol.responses.routes import create_response
from lgos.protocol.responses.routes import router as responses_router
from lgos.protocol.validation import format_param
from lgos.runtime.runner import GraphRunner
from lgos.scope import ScopeResolver, shared_scope
from lgos.settings import LGOSSettings
from lgos.state import AppState

logger = logging.getLogger("lgos.app")


def build_runners(registry: GraphRegistry) -> dict[str, GraphRunner]:
    runners = {}
    for name, config in registry.items():
        graph = config.graph if isinstance(config.graph, Pregel) else config.graph()
        runners[name] = GraphRunner(name, config, graph)
    return runners


def create_app(
    registry: GraphRegistry,
    settings: LGOSSettings | None = None,
    *,
    scope_resolver: ScopeResolver = shared_scope,
) -> FastAPI:
    """Serve ``registry`` over the OpenAI Models, Responses and Chat Completions APIs.

    ``scope_resolver`` maps each request to the server-trusted scope that isolates interrupt
    runs; the default single shared scope suits single-tenant deployments only.
    """
    settings = settings or LGOSSettings()
    scope_resolver = trusted_resolver(settings, scope_resolver)
    state = AppState(
        registry=registry,
        runners=build_runners(registry),
        settings=settings,
        scope_resolver=scope_resolver,
    )
    state.background_factory = functools.partial(
        open_backend, settings, functools.partial(execute_job, state)
    )

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        await state.open()
        chores = []
        interrupt_graphs = any(GraphFeature.INTERRUPTS in c.features for c in registry.values())
        if interrupt_graphs and settings.sweep_interval > 0:
            chores.append(asyncio.create_task(sweep_forever(state.interrupts, settings)))
        if settings.loop_lag_interval > 0:
            probe = probe_loop_lag(settings.loop_lag_interval, settings.loop_lag_report_every)
            chores.append(asyncio.create_task(probe))
        try:
            yield
        finally:
            for chore in chores:
                chore.cancel()
            await asyncio.gather(*chores, return_exceptions=True)
            await state.aclose()
            metrics.mark_process_dead()

    app = FastAPI(
        title="LangGraph OpenAI Serve",
        version="0.1.0",
        lifespan=lifespan,
        telemetry=FASTAPI_TELEMETRY,
    )
    app.state.lgos = state
    app.include_router(models_router)
    app.include_router(responses_router)
    app.include_router(chat_router)
    # The generation routes carry nearly all the traffic; they take only the request and the
    # app state, which FastAPI would solve anew for every request.
    serve_directly(app, responses_router, create_response)
    serve_directly(app, chat_router, create_chat_completion)

    @app.get("/health", tags=["health"])
    async def health() -> dict[str, Any]:
        return {"status": "ok", "models": len(registry)}

    install_openapi(app, openapi.describe)
    limit = settings.max_request_bytes
    app.add_middleware(
        BodyLimit, default=Limit(limit, functools.partial(RequestTooLargeError, limit))
    )
    if settings.api_keys:
        app.add_middleware(APIKeyAuth, keys=settings.api_keys)
    _install_error_handlers(app)
    install_request_context(app, service="lgos")
    metrics.set_enabled(settings.metrics_enabled)
    if settings.metrics_enabled:
        metrics.install_route(
            app,
            (
                functools.partial(_queue_readings, state),
                functools.partial(_pending_readings, state),
            ),
        )
    return app


async def _queue_readings(state: AppState) -> metrics.Readings:
    """The shared background queue, read at scrape time (distributed backend only)."""
    records = getattr(state.background, "records", None)
    if records is None:
        return {}
    depth, oldest = await records.queue_stats()
    return {
        "lgos_background_queue_depth": ("Background jobs waiting for a worker.", depth),
        "lgos_background_oldest_job_age_seconds": (
            "Age of the oldest background job still waiting for a worker.",
            oldest,
        ),
    }


PENDING_TIMEOUT = TIMEOUT_MS / 1000 + 1
"""Seconds a scrape waits for the paused-run count, opening the store included."""


async def _pending_readings(state: AppState) -> metrics.Readings:
    """Paused interrupt runs per graph, counted in the shared checkpoint store at scrape time
    (every graph that declares interrupts is listed, with 0 when none is paused)."""
    graphs = [n for n, c in state.registry.items() if GraphFeature.INTERRUPTS in c.features]
    if not graphs:
        return {}

    async def count() -> dict[str, int]:
        return await pending_runs((await state.interrupts.service()).saver)

    counts = await asyncio.wait_for(count(), timeout=PENDING_TIMEOUT)
    by_graph = {**dict.fromkeys(graphs, 0.0), **{g: float(n) for g, n in counts.items()}}
    return {
        "lgos_interrupt_runs_pending": (
            "Interrupt runs paused awaiting an answer, by graph.",
            metrics.Labelled("graph", by_graph),
        )
    }


def _install_error_handlers(app: FastAPI) -> None:
    app.add_exception_handler(LGOSError, envelope_handler)

    @app.exception_handler(RequestValidationError)
    async def validation_error(request: Request, exc: RequestValidationError) -> Response:
        first = exc.errors()[0] if exc.errors() else {}
        location = [p for p in first.get("loc", ()) if p not in ("body", "path", "query")]
        param = format_param(location) or None
        message = f"Invalid '{param}': {first.get('msg')}." if param else "Invalid request."
        return JSONResponse(error_envelope(message, param=param), status_code=400)

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, exc: HTTPException) -> Response:
        kind: ErrorType = "invalid_request_error" if exc.status_code < 500 else "server_error"
        message = str(exc.detail) if exc.status_code < 500 else InternalServerError().message
        code = "not_found" if exc.status_code == 404 else None
        return JSONResponse(
            error_envelope(message, type=kind, code=code),
            status_code=exc.status_code,
            headers=getattr(exc, "headers", None),
        )

    @app.exception_handler(ClientDisconnect)
    async def client_gone(request: Request, exc: ClientDisconnect) -> Response:
        # Nobody is listening; the run was already cancelled.
        return Response(status_code=499)

    @app.exception_handler(SecondInterruptError)
    async def second_interrupt(request: Request, exc: SecondInterruptError) -> Response:
        logger.error("graph broke the one-interrupt-per-node rule", exc_info=exc)
        return error_response(InternalServerError())

    @app.exception_handler(Exception)
    async def unexpected(request: Request, exc: Exception) -> Response:
        if is_outage(exc):
            logger.warning(
                "storage unavailable", extra={"path": request.url.path, "error": repr(exc)}
            )
            return error_response(ServiceUnavailableError())
        logger.error("unhandled error", exc_info=exc, extra={"path": request.url.path})
        return error_response(InternalServerError())
