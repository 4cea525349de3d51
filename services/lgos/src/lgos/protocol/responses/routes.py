"""``POST /v1/responses`` and the background-only retrieve/cancel routes."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable

from fastapi import APIRouter, Request
from service_kit import context, langfuse
from starlette.responses import Response

from lgos.background.backend import Snapshot
from lgos.errors import NotFoundError
from lgos.protocol import ids
from lgos.protocol.json import JSONResponse
from lgos.protocol.limits import check_shape
from lgos.protocol.responses.background import create_background
from lgos.protocol.responses.decode import decode
from lgos.protocol.responses.encode import build_response, encode_stream
from lgos.protocol.responses.items import ResponseShell
from lgos.protocol.responses.runs import open_run
from lgos.protocol.sse import SSEResponse
from lgos.protocol.validation import parse_json_body, require_model
from lgos.state import AppState, StateDep

router = APIRouter(tags=["responses"])


@router.post("/v1/responses", response_model=None)
async def create_response(request: Request, state: StateDep) -> Response | SSEResponse:
    body = parse_json_body(await request.body())
    check_shape(body, state.settings, items="input")
    runner = state.runner_for(require_model(body))
    context.bind(model=runner.model)
    decoded = decode(body, runner.model, runner.config)
    langfuse.set_session(decoded.graph_request.conversation_id)
    if decoded.background:
        return JSONResponse(await create_background(request, state, runner, decoded, body))
    scope = functools.partial(state.scope_resolver, request)
    run = await open_run(state, runner, decoded, scope)
    shell = ResponseShell(
        model=runner.model, request=decoded, id=run.response_id or ids.response_id()
    )
    context.bind(response_id=shell.id)
    if decoded.graph_request.stream:
        # The lease is released before the terminal event goes out: a client that resumes as
        # soon as it reads the pause must not meet its own run still "executing" (409).
        return SSEResponse(
            encode_stream(runner, run.plan, shell, before_terminal=run.close),
            ping_interval=state.settings.sse_ping_interval,
            on_close=run.close,
        )
    return JSONResponse(build_response(shell, await run.invoke(request)))


def _not_found(response_id: str) -> NotFoundError:
    # Unknown, other-scope and foreground ids (never stored) look the same; a string that is
    # no Response id at all is not looked up, nor echoed.
    shown = response_id if ids.is_response_id(response_id) else "(not a Response id)"
    return NotFoundError(
        f"No response found with id '{shown}'.", param="response_id", code="not_found"
    )


@router.get("/v1/responses/{response_id}")
async def retrieve_response(response_id: str, request: Request, state: StateDep) -> Response:
    return await _background_response(response_id, request, state.background.retrieve, state)


@router.post("/v1/responses/{response_id}/cancel")
async def cancel_response(response_id: str, request: Request, state: StateDep) -> Response:
    return await _background_response(response_id, request, state.background.cancel, state)


async def _background_response(
    response_id: str,
    request: Request,
    lookup: Callable[[str, str], Awaitable[Snapshot | None]],
    state: AppState,
) -> Response:
    snapshot = None
    if ids.is_response_id(response_id):
        snapshot = await lookup(response_id, state.scope_resolver(request))
    if snapshot is None:
        raise _not_found(response_id)
    return JSONResponse(snapshot)
