"""HTTP surface: Chat Completions and Responses, streaming and not, with usage."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any
from uuid import uuid4

import orjson
from fastapi import FastAPI, Request
from fastapi.responses import StreamingResponse
from starlette.responses import Response

from offline_model.answer import MODEL_NAME, Prompt, compose_answer, count_tokens, tokenize
from offline_model.settings import OfflineModelSettings


def _json(body: Any, status_code: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status_code, media_type="application/json")


def _error(message: str, param: str | None = None, status_code: int = 400) -> Response:
    error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
    return _json({"error": error}, status_code)


def _text_of(content: Any, files: list[str]) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    texts = []
    for part in content:
        if not isinstance(part, dict):
            continue
        if isinstance(part.get("text"), str):
            texts.append(part["text"])
        file = part.get("file") if part.get("type") == "file" else part
        if isinstance(file, dict) and isinstance(file.get("file_id"), str):
            files.append(file["file_id"])
    return "".join(texts)


def chat_prompt(messages: list[dict[str, Any]]) -> Prompt:
    prompt = Prompt()
    for message in messages:
        role = message.get("role")
        text = _text_of(message.get("content"), prompt.files)
        if role in ("system", "developer"):
            prompt.instructions.append(text)
        elif role == "user":
            prompt.user.append(text)
        elif role == "assistant":
            prompt.assistant.append(text)
        elif role == "tool":
            prompt.tool_outputs.append(text)
    return prompt


def responses_prompt(body: dict[str, Any]) -> Prompt:
    prompt = Prompt()
    if isinstance(body.get("instructions"), str):
        prompt.instructions.append(body["instructions"])
    raw = body.get("input")
    items = [{"role": "user", "content": raw}] if isinstance(raw, str) else raw or []
    for item in items:
        kind = item.get("type", "message")
        if kind == "function_call_output":
            prompt.tool_outputs.append(str(item.get("output", "")))
        elif kind == "message":
            role = item.get("role")
            text = _text_of(item.get("content"), prompt.files)
            if role in ("system", "developer"):
                prompt.instructions.append(text)
            elif role == "user":
                prompt.user.append(text)
            elif role == "assistant":
                prompt.assistant.append(text)
    return prompt


def _limit(tokens: list[str], limit: Any) -> tuple[list[str], bool]:
    if isinstance(limit, int) and 0 < limit < len(tokens):
        return tokens[:limit], True
    return tokens, False


def create_app(settings: OfflineModelSettings | None = None) -> FastAPI:
    settings = settings or OfflineModelSettings()
    app = FastAPI(title="offline-model (deterministic stand-in)")
    delay = settings.token_delay

    async def paced(tokens: list[str]) -> AsyncIterator[str]:
        for token in tokens:
            if delay:
                await asyncio.sleep(delay)
            yield token

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
        return _json({"object": "list", "data": [entry]})

    @app.post("/v1/chat/completions")
    async def chat(request: Request) -> Response:
        body = orjson.loads(await request.body())
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return _error("'messages' must be a non-empty array.", "messages")
        prompt = chat_prompt(messages)
        tokens, truncated = _limit(
            tokenize(compose_answer(prompt)),
            body.get("max_completion_tokens") or body.get("max_tokens"),
        )
        finish = "length" if truncated else "stop"
        usage = {
            "prompt_tokens": count_tokens(
                [*prompt.instructions, *prompt.user, *prompt.assistant, *prompt.tool_outputs]
            ),
            "completion_tokens": len(tokens),
        }
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        completion_id, created = f"chatcmpl-{uuid4().hex}", int(time.time())
        model = body.get("model") or MODEL_NAME
        if not body.get("stream"):
            message = {"role": "assistant", "content": "".join(tokens), "refusal": None}
            return _json(
                {
                    "id": completion_id,
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "usage": usage,
                    "choices": [
                        {"index": 0, "message": message, "finish_reason": finish, "logprobs": None}
                    ],
                }
            )
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))

        def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}
            return (
                b"data: "
                + orjson.dumps(
                    {
                        "id": completion_id,
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                        "choices": [choice],
                    }
                )
                + b"\n\n"
            )

        async def events() -> AsyncIterator[bytes]:
            yield chunk({"role": "assistant", "content": ""})
            async for token in paced(tokens):
                yield chunk({"content": token})
            yield chunk({}, finish)
            if include_usage:
                yield (
                    b"data: "
                    + orjson.dumps(
                        {
                            "id": completion_id,
                            "object": "chat.completion.chunk",
                            "created": created,
                            "model": model,
                            "choices": [],
                            "usage": usage,
                        }
                    )
                    + b"\n\n"
                )
            yield b"data: [DONE]\n\n"

        return StreamingResponse(events(), media_type="text/event-stream")

    @app.post("/v1/responses")
    async def responses(request: Request) -> Response:
        body = orjson.loads(await request.body())
        if body.get("input") is None:
            return _error("Missing required parameter: 'input'.", "input")
        prompt = responses_prompt(body)
        tokens, truncated = _limit(tokenize(compose_answer(prompt)), body.get("max_output_tokens"))
        input_tokens = count_tokens(
            [*prompt.instructions, *prompt.user, *prompt.assistant, *prompt.tool_outputs]
        )
        usage = {
            "input_tokens": input_tokens,
            "input_tokens_details": {"cached_tokens": 0, "cache_write_tokens": 0},
            "output_tokens": len(tokens),
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": input_tokens + len(tokens),
        }
        response_id, item_id = f"resp_{uuid4().hex}", f"msg_{uuid4().hex}"
        text = "".join(tokens)

        def response(status: str, output: list[Any], with_usage: bool) -> dict[str, Any]:
            return {
                "id": response_id,
                "object": "response",
                "created_at": int(time.time()),
                "status": status,
                "model": body.get("model") or MODEL_NAME,
                "output": output,
                "error": None,
                "incomplete_details": {"reason": "max_output_tokens"}
                if truncated and status == "incomplete"
                else None,
                "instructions": body.get("instructions"),
                "metadata": body.get("metadata") or {},
                "parallel_tool_calls": True,
                "tool_choice": "auto",
                "tools": [],
                "usage": usage if with_usage else None,
            }

        def item(content_text: str, status: str) -> dict[str, Any]:
            return {
                "id": item_id,
                "type": "message",
                "role": "assistant",
                "status": status,
                "content": [
                    {"type": "output_text", "text": content_text, "annotations": [], "logprobs": []}
                ],
            }

        final_status = "incomplete" if truncated else "completed"
        if not body.get("stream"):
            return _json(response(final_status, [item(text, final_status)], True))

        async def events() -> AsyncIterator[bytes]:
            sequence = 0

            def frame(event: dict[str, Any]) -> bytes:
                nonlocal sequence
                event["sequence_number"] = sequence
                sequence += 1
                kind: str = event["type"]
                return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(event) + b"\n\n"

            base = {"item_id": item_id, "output_index": 0, "content_index": 0}
            yield frame(
                {"type": "response.created", "response": response("in_progress", [], False)}
            )
            yield frame(
                {
                    "type": "response.output_item.added",
                    "output_index": 0,
                    "item": {**item("", "in_progress"), "content": []},
                }
            )
            yield frame(
                {
                    "type": "response.content_part.added",
                    **base,
                    "part": {"type": "output_text", "text": "", "annotations": []},
                }
            )
            async for token in paced(tokens):
                yield frame(
                    {"type": "response.output_text.delta", **base, "delta": token, "logprobs": []}
                )
            yield frame({"type": "response.output_text.done", **base, "text": text, "logprobs": []})
            yield frame(
                {
                    "type": "response.content_part.done",
                    **base,
                    "part": {"type": "output_text", "text": text, "annotations": []},
                }
            )
            yield frame(
                {
                    "type": "response.output_item.done",
                    "output_index": 0,
                    "item": item(text, final_status),
                }
            )
            yield frame(
                {
                    "type": f"response.{final_status}",
                    "response": response(final_status, [item(text, final_status)], True),
                }
            )

        return StreamingResponse(events(), media_type="text/event-stream")

    return app
