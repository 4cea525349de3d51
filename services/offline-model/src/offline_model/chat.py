"""``POST /v1/chat/completions``: answers or deterministic tool calls, streaming or not."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from typing import Any
from uuid import uuid4

import orjson
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from service_kit.responses import JSONResponse
from starlette.responses import Response

from offline_model.answer import MODEL_NAME, count_tokens, tokenize
from offline_model.compose import compose_answer
from offline_model.http import paced, truncate
from offline_model.prompts import chat_prompt, input_tokens
from offline_model.requests import ChatRequest, parse
from offline_model.tools import chat_tools, plan_calls

router = APIRouter()


@router.post("/v1/chat/completions")
async def chat(request: Request) -> Response:
    body = parse(await request.body(), ChatRequest)
    messages = body["messages"]
    prompt = chat_prompt(messages)
    calls = plan_calls(prompt, chat_tools(body.get("tools")), body.get("tool_choice"))
    tokens, truncated = (
        ([], False)
        if calls
        else truncate(
            tokenize(compose_answer(prompt, echo=request.app.state.echo)),
            body.get("max_completion_tokens") or body.get("max_tokens"),
        )
    )
    finish = "tool_calls" if calls else ("length" if truncated else "stop")
    usage = {
        "prompt_tokens": count_tokens(input_tokens(prompt)),
        "completion_tokens": len(tokens) + sum(count_tokens([c.payload]) for c in calls),
    }
    usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
    tool_calls: list[dict[str, Any]] = [
        {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": c.payload}}
        for c in calls
    ]
    envelope: dict[str, Any] = {
        "id": f"chatcmpl-{uuid4().hex}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model") or MODEL_NAME,
    }
    if not body.get("stream"):
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if calls else "".join(tokens),
            "refusal": None,
        }
        if tool_calls:
            message["tool_calls"] = tool_calls
        choice = {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
        return JSONResponse(
            {**envelope, "object": "chat.completion", "usage": usage, "choices": [choice]}
        )

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
        body_ = {**envelope, "object": "chat.completion.chunk", "choices": [choice]}
        return b"data: " + orjson.dumps(body_) + b"\n\n"

    include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

    async def events() -> AsyncIterator[bytes]:
        yield chunk({"role": "assistant", "content": "" if not calls else None})
        for index, call in enumerate(calls):
            head = {
                "id": call.call_id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            yield chunk({"tool_calls": [{"index": index, **head}]})
            arguments = {"arguments": call.payload}
            yield chunk({"tool_calls": [{"index": index, "function": arguments}]})
        async for token in paced(tokens, request.app.state.token_delay):
            yield chunk({"content": token})
        yield chunk({}, finish)
        if include_usage:
            last = {**envelope, "object": "chat.completion.chunk", "choices": [], "usage": usage}
            yield b"data: " + orjson.dumps(last) + b"\n\n"
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")
