"""``POST /v1/responses``: answers or deterministic function/custom tool calls, with usage."""

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
from offline_model.prompts import input_tokens, responses_prompt
from offline_model.requests import ResponsesRequest, parse
from offline_model.structured import json_schema_of, structured_answer
from offline_model.tools import PlannedCall, plan_calls, responses_tools

router = APIRouter()


def _call_item(call: PlannedCall, *, done: bool) -> dict[str, Any]:
    custom = call.kind == "custom"
    return {
        "type": "custom_tool_call" if custom else "function_call",
        "id": f"{'ctc' if custom else 'fc'}_{call.call_id}",
        "call_id": call.call_id,
        "name": call.name,
        # A custom tool's free-form input, a function's JSON arguments; empty until done.
        ("input" if custom else "arguments"): call.payload if done else "",
        "status": "completed" if done else "in_progress",
    }


def _message_item(item_id: str, text: str, status: str) -> dict[str, Any]:
    part = {"type": "output_text", "text": text, "annotations": [], "logprobs": []}
    return {
        "id": item_id,
        "type": "message",
        "role": "assistant",
        "status": status,
        "content": [part],
    }


@router.post("/v1/responses")
async def responses(request: Request) -> Response:
    body = parse(await request.body(), ResponsesRequest)
    prompt = responses_prompt(body)
    calls = plan_calls(prompt, responses_tools(body.get("tools")), body.get("tool_choice"))
    schema = json_schema_of(body)
    answer = (
        compose_answer(prompt, echo=request.app.state.echo)
        if schema is None
        else orjson.dumps(structured_answer(schema, prompt)).decode()
    )
    tokens, truncated = (
        ([], False) if calls else truncate(tokenize(answer), body.get("max_output_tokens"))
    )
    prompt_tokens = count_tokens(input_tokens(prompt))
    output_tokens = len(tokens) + sum(count_tokens([c.payload]) for c in calls)
    usage = {
        "input_tokens": prompt_tokens,
        "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
        "output_tokens": output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": prompt_tokens + output_tokens,
    }
    response_id, item_id = f"resp_{uuid4().hex}", f"msg_{uuid4().hex}"
    text = "".join(tokens)
    final_status = "incomplete" if truncated else "completed"
    final_output = (
        [_call_item(c, done=True) for c in calls]
        if calls
        else [_message_item(item_id, text, final_status)]
    )

    def response(status: str, output: list[Any]) -> dict[str, Any]:
        done = status != "in_progress"
        return {
            "id": response_id,
            "object": "response",
            "created_at": int(time.time()),
            "status": status,
            "model": body.get("model") or MODEL_NAME,
            "output": output,
            "error": None,
            "incomplete_details": {"reason": "max_output_tokens"}
            if status == "incomplete"
            else None,
            "instructions": body.get("instructions"),
            "metadata": body.get("metadata") or {},
            "parallel_tool_calls": True,
            "tool_choice": body.get("tool_choice") or "auto",
            "tools": body.get("tools") or [],
            **({"text": body["text"]} if schema is not None else {}),
            "usage": usage if done else None,
        }

    if not body.get("stream"):
        return JSONResponse(response(final_status, final_output))

    async def events() -> AsyncIterator[bytes]:
        sequence = 0

        def frame(event: dict[str, Any]) -> bytes:
            nonlocal sequence
            event["sequence_number"] = sequence
            sequence += 1
            kind: str = event["type"]
            return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"

        yield frame({"type": "response.created", "response": response("in_progress", [])})
        for index, call in enumerate(calls):
            added = _call_item(call, done=False)
            base = {"item_id": added["id"], "output_index": index}
            yield frame(
                {"type": "response.output_item.added", "output_index": index, "item": added}
            )
            if call.kind == "custom":
                yield frame(
                    {"type": "response.custom_tool_call_input.delta", **base, "delta": call.payload}
                )
                yield frame(
                    {"type": "response.custom_tool_call_input.done", **base, "input": call.payload}
                )
            else:
                yield frame(
                    {
                        "type": "response.function_call_arguments.delta",
                        **base,
                        "delta": call.payload,
                    }
                )
                yield frame(
                    {
                        "type": "response.function_call_arguments.done",
                        **base,
                        "arguments": call.payload,
                    }
                )
            yield frame(
                {
                    "type": "response.output_item.done",
                    "output_index": index,
                    "item": _call_item(call, done=True),
                }
            )
        if not calls:
            base = {"item_id": item_id, "output_index": 0, "content_index": 0}
            empty = {"type": "output_text", "text": "", "annotations": [], "logprobs": []}
            yield frame(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {**_message_item(item_id, "", "in_progress"), "content": []},
                }
            )
            yield frame({"type": "response.content_part.added", **base, "part": empty})
            async for token in paced(tokens, request.app.state.token_delay):
                yield frame(
                    {"type": "response.output_text.delta", **base, "delta": token, "logprobs": []}
                )
            yield frame({"type": "response.output_text.done", **base, "text": text, "logprobs": []})
            yield frame(
                {"type": "response.content_part.done", **base, "part": {**empty, "text": text}}
            )
            yield frame(
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": _message_item(item_id, text, final_status),
                }
            )
        yield frame(
            {"type": f"response.{final_status}", "response": response(final_status, final_output)}
        )

    return StreamingResponse(events(), media_type="text/event-stream")
