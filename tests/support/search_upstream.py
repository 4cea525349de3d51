"""FAKE hosted model with OpenAI's built-in ``web_search``, in front of the real offline-model.

No real model with Web search can be reached here. This proxy plays that upstream for the demo
graphs' ``DEMO_API_WEB_SEARCH_BACKEND=openai``: a ``POST /v1/responses`` whose tools include
``{"type": "web_search"}`` gets a canned answer citing :data:`RESULT_URL` (as one JSON body, or
as a Responses event stream when the request asks to stream, as a real upstream would); every
other request goes unchanged to offline-model. ``GET /searches`` lists what each search request
asked for (``stream``, ``store``, its tools), so tests can check the call was private.

    python -m tests.support.search_upstream --port P --upstream http://127.0.0.1:Q/v1
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.servers import run_proxy

RESULT_URL = "https://example.org/fake-search/langgraph-interrupts"
RESULT_TITLE = "FAKE search result: LangGraph interrupts"
SEARCH_TEXT = "FAKE_SEARCH_TEXT interrupts pause a run until a person answers."


def is_search(body: dict[str, Any]) -> bool:
    tools = body.get("tools") or []
    return any(isinstance(t, dict) and t.get("type") == "web_search" for t in tools)


def canned(body: dict[str, Any]) -> dict[str, Any]:
    annotation = {
        "type": "url_citation",
        "url": RESULT_URL,
        "title": RESULT_TITLE,
        "start_index": 0,
        "end_index": len(SEARCH_TEXT),
    }
    message = {
        "id": "msg_fake_search",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {
                "type": "output_text",
                "text": SEARCH_TEXT,
                "annotations": [annotation],
                "logprobs": [],
            }
        ],
    }
    call = {
        "id": "ws_fake_search",
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": "fake"},
    }
    return {
        "id": "resp_fake_search",
        "object": "response",
        "created_at": int(time.time()),
        "model": body.get("model") or "fake-search-model",
        "status": "completed",
        "output": [call, message],
        "parallel_tool_calls": True,
        "tool_choice": "auto",
        "tools": body.get("tools") or [],
        "store": body.get("store", True),
        "usage": {
            "input_tokens": 5,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 9,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 14,
        },
    }


def events(response: dict[str, Any]) -> list[dict[str, Any]]:
    """The canned answer as a Responses event stream (text in one delta)."""
    call, message = response["output"]
    part = message["content"][0]
    empty_message = {**message, "status": "in_progress", "content": []}
    started = {**response, "status": "in_progress", "output": []}
    ids = {"item_id": message["id"], "output_index": 1, "content_index": 0}
    return [
        {"type": "response.created", "response": started},
        {"type": "response.output_item.added", "output_index": 0, "item": call},
        {"type": "response.output_item.done", "output_index": 0, "item": call},
        {"type": "response.output_item.added", "output_index": 1, "item": empty_message},
        {
            "type": "response.content_part.added",
            **ids,
            "part": {**part, "text": "", "annotations": []},
        },
        {"type": "response.output_text.delta", **ids, "delta": part["text"], "logprobs": []},
        {
            "type": "response.output_text.annotation.added",
            **ids,
            "annotation_index": 0,
            "annotation": part["annotations"][0],
        },
        {"type": "response.output_text.done", **ids, "text": part["text"], "logprobs": []},
        {"type": "response.content_part.done", **ids, "part": part},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed", "response": response},
    ]


def create_app(upstream: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=None)
    searches: list[dict[str, Any]] = []

    async def relay(response: httpx.Response) -> AsyncIterator[bytes]:
        try:
            async for chunk in response.aiter_raw():
                yield chunk
        finally:
            await response.aclose()

    async def responses(request: Request) -> Response:
        raw = await request.body()
        body = json.loads(raw)
        if is_search(body):
            searches.append(
                {"stream": body.get("stream"), "store": body.get("store"), "tools": body["tools"]}
            )
            answer = canned(body)
            if not body.get("stream"):
                return JSONResponse(answer)
            lines = [
                f"event: {e['type']}\ndata: {json.dumps({**e, 'sequence_number': i})}\n\n"
                for i, e in enumerate(events(answer))
            ]
            return Response("".join(lines), media_type="text/event-stream")
        upstream_request = client.build_request(
            "POST", "responses", content=raw, headers={"content-type": "application/json"}
        )
        response = await client.send(upstream_request, stream=True)
        media = response.headers.get("content-type", "application/json")
        return StreamingResponse(
            relay(response), status_code=response.status_code, media_type=media
        )

    async def listed(request: Request) -> Response:
        return JSONResponse(searches)

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/responses", responses, methods=["POST"]),
            Route("/searches", listed),
            Route("/health", health),
        ]
    )


def main() -> None:
    run_proxy(__doc__ or "", create_app)


if __name__ == "__main__":
    main()
