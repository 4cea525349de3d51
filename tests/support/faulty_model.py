"""FAKE model upstream that injects faults in front of the real offline-model.

A hosted model that is slow, rate-limited, failing or cut off mid-answer cannot be had here, so
this small proxy makes the real offline-model behave that way: answers stay offline-model's own,
only their delivery is damaged. The fault is named in the prompt (the graphs pass the user's text
on to the model), so concurrent requests can each ask for their own:

- ``fault=slow:SECONDS``  a slow start: each of the first SLOW_CHUNKS chunks (the wait for the
  answer and its first tokens) is delayed by SECONDS, then the rest flows
- ``fault=429`` / ``fault=500``  an OpenAI error envelope with that status (the SDK retries once)
- ``fault=cut:N``  N chunks, then the connection is dropped without ending the stream
- ``fault=stall:N``  N chunks, then silence until the client gives up

``GET /faults`` reports how many model calls each fault received. Run it with
``python -m tests.support.faulty_model --port P --upstream http://127.0.0.1:Q/v1``.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from tests.support.servers import run_proxy

FAULT = re.compile(r"fault=(slow|429|500|cut|stall)(?::([0-9.]+))?")
SLOW_CHUNKS = 4


class CutStream(Exception):
    """Raised inside the streamed body: uvicorn then drops the connection mid-stream."""


def fault_of(body: dict[str, Any]) -> tuple[str, float] | None:
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "user":
            found = FAULT.search(json.dumps(message.get("content")))
            if found:
                return found.group(1), float(found.group(2) or 0)
            return None
    return None


def create_app(upstream: str) -> Starlette:
    client = httpx.AsyncClient(base_url=upstream, timeout=None)
    calls: Counter[str] = Counter()

    async def relay(kind: str, amount: float, response: httpx.Response) -> AsyncIterator[bytes]:
        sent = 0
        try:
            async for line in response.aiter_lines():
                if not line:
                    continue
                if kind == "slow" and sent < SLOW_CHUNKS:
                    await asyncio.sleep(amount)
                elif kind == "cut" and sent >= amount:
                    raise CutStream(f"cut after {sent} chunks")
                elif kind == "stall" and sent >= amount:
                    await asyncio.sleep(3600)
                yield line.encode() + b"\n\n"
                sent += 1
        finally:
            await response.aclose()

    async def chat(request: Request) -> Response:
        raw = await request.body()
        body = json.loads(raw)
        kind, amount = fault_of(body) or ("none", 0.0)
        calls[kind] += 1
        if kind in ("429", "500"):
            status = int(kind)
            error = {
                "message": "Rate limit reached." if status == 429 else "The model failed.",
                "type": "rate_limit_error" if status == 429 else "server_error",
                "param": None,
                "code": None,
            }
            # A short Retry-After keeps the SDK's one retry quick.
            return JSONResponse({"error": error}, status, headers={"retry-after-ms": "50"})
        upstream_request = client.build_request(
            "POST", "chat/completions", content=raw, headers={"content-type": "application/json"}
        )
        response = await client.send(upstream_request, stream=True)
        if not body.get("stream"):
            content = await response.aread()
            return Response(content, response.status_code, media_type="application/json")
        return StreamingResponse(
            relay(kind, amount, response), media_type="text/event-stream", status_code=200
        )

    async def faults(request: Request) -> Response:
        return JSONResponse(dict(calls))

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    return Starlette(
        routes=[
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/faults", faults),
            Route("/health", health),
        ]
    )


def main() -> None:
    run_proxy(__doc__ or "", create_app)


if __name__ == "__main__":
    main()
