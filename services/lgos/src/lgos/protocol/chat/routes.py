"""``POST /v1/chat/completions``."""

from __future__ import annotations

from fastapi import APIRouter, Request
from service_kit import context, langfuse
from starlette.responses import Response

from lgos.protocol.cancel import run_or_cancel
from lgos.protocol.chat.decode import decode
from lgos.protocol.chat.encode import CompletionShell, encode_stream
from lgos.protocol.json import JSONResponse
from lgos.protocol.limits import check_shape
from lgos.protocol.sse import SSEResponse
from lgos.protocol.validation import parse_json_body, require_model
from lgos.state import StateDep

router = APIRouter(tags=["chat"])


@router.post("/v1/chat/completions", response_model=None)
async def create_chat_completion(request: Request, state: StateDep) -> Response:
    body = parse_json_body(await request.body())
    check_shape(body, state.settings, items="messages")
    runner = state.runner_for(require_model(body))
    context.bind(model=runner.model)
    decoded = decode(body, runner.model, runner.config)
    langfuse.set_session(decoded.graph_request.conversation_id)
    plan = runner.prepare(decoded.graph_request)
    shell = CompletionShell(model=runner.model)
    if decoded.graph_request.stream:
        return SSEResponse(
            encode_stream(runner, plan, shell, include_usage=decoded.include_usage),
            ping_interval=state.settings.sse_ping_interval,
        )
    outcome = await run_or_cancel(request, runner.invoke(plan))
    return JSONResponse(shell.completion(outcome))
