"""``POST /v1/responses`` and the background-only retrieve/cancel routes."""

from __future__ import annotations

import asyncio
import functools

from fastapi import APIRouter, Request
from starlette.responses import Response

from lgos.config import GraphFeature
from lgos.errors import NotFoundError
from lgos.protocol.cancel import run_or_cancel
from lgos.protocol.ids import is_response_id
from lgos.protocol.json import JSONResponse
from lgos.protocol.limits import check_shape
from lgos.protocol.responses.background import create_background
from lgos.protocol.responses.decode import DecodedResponsesRequest, decode
from lgos.protocol.responses.encode import build_response, encode_stream
from lgos.protocol.responses.items import ResponseShell
from lgos.protocol.sse import SSEResponse
from lgos.protocol.validation import parse_json_body
from lgos.runtime.runner import GraphRunner
from lgos.state import AppState, StateDep

router = APIRouter(tags=["responses"])


@router.post("/v1/responses", response_model=None)
async def create_response(request: Request, state: StateDep) -> Response | SSEResponse:
    body = parse_json_body(await request.body())
    check_shape(body, state.limits, items="input")
    runner = state.runner_for(body.get("model"))
    decoded = decode(body, runner.model, runner.config)
    if decoded.background:
        return JSONResponse(await create_background(request, state, runner, decoded, body))
    if GraphFeature.INTERRUPTS in runner.config.features:
        return await _interrupt_response(request, state, runner, decoded)
    plan = runner.prepare(decoded.graph_request)
    shell = ResponseShell(model=runner.model, request=decoded)
    if decoded.graph_request.stream:
        return SSEResponse(
            encode_stream(runner, plan, shell), ping_interval=state.settings.sse_ping_interval
        )
    outcome = await run_or_cancel(request, runner.invoke(plan))
    return JSONResponse(build_response(shell, outcome))


async def _interrupt_response(
    request: Request, state: AppState, runner: GraphRunner, decoded: DecodedResponsesRequest
) -> Response:
    """Start or resume an interrupt run under its lease; the lease ends with the response."""
    service = await state.interrupts.service()
    scope = state.scope_resolver(request)
    if decoded.resume is None:
        run = await service.start(runner.graph, scope, runner.model)
    else:
        resume = decoded.resume
        run = await service.resume(runner.graph, scope, runner.model, resume.run_id, resume.answers)
    try:
        plan = service.prepare(runner, decoded.graph_request, run)
    except BaseException:
        await service.close(run)
        raise
    shell = ResponseShell(
        model=runner.model,
        request=decoded,
        id=run.response_id,
        previous_response_id=decoded.resume.previous_response_id if decoded.resume else None,
    )
    if decoded.graph_request.stream:
        # The lease is released before the terminal event goes out: a client that resumes as
        # soon as it reads the pause must not meet its own run still "executing" (409).
        close = functools.partial(service.close, run)
        return SSEResponse(
            encode_stream(runner, plan, shell, before_terminal=close),
            ping_interval=state.settings.sse_ping_interval,
            on_close=close,
        )
    try:
        outcome = await run_or_cancel(request, runner.invoke(plan))
    finally:
        await asyncio.shield(service.close(run))
    return JSONResponse(build_response(shell, outcome))


def _not_found(response_id: str) -> NotFoundError:
    # Unknown, other-scope and foreground ids (never stored) look the same; a string that is
    # no Response id at all is not looked up, nor echoed.
    shown = response_id if is_response_id(response_id) else "(not a Response id)"
    return NotFoundError(
        f"No response found with id '{shown}'.", param="response_id", code="not_found"
    )


@router.get("/v1/responses/{response_id}")
async def retrieve_response(response_id: str, request: Request, state: StateDep) -> Response:
    snapshot = None
    if is_response_id(response_id):
        snapshot = await state.background.retrieve(response_id, state.scope_resolver(request))
    if snapshot is None:
        raise _not_found(response_id)
    return JSONResponse(snapshot)


@router.post("/v1/responses/{response_id}/cancel")
async def cancel_response(response_id: str, request: Request, state: StateDep) -> Response:
    snapshot = None
    if is_response_id(response_id):
        snapshot = await state.background.cancel(response_id, state.scope_resolver(request))
    if snapshot is None:
        raise _not_found(response_id)
    return JSONResponse(snapshot)
