"""A FAULT-INJECTING proxy in front of the real Files service (a test stand-in, nothing more).

It forwards every request unchanged, except that the first ``--lose-uploads`` successful
``POST /v1/files`` answers are replaced by a 502: the upload did happen upstream, but the caller
cannot know it, as when a gateway loses the response. ``GET /proxy/uploads`` reports how many
uploads reached the Files service through it.

Run as ``python -m tests.support.lossy_files_proxy --port P --upstream http://files``.
"""

from __future__ import annotations

import argparse

import httpx
import uvicorn
from fastapi import FastAPI, Request
from starlette.responses import JSONResponse, Response

_HOP_HEADERS = {"host", "content-length", "transfer-encoding", "connection"}


def create_app(upstream: str, lose_uploads: int) -> FastAPI:
    app = FastAPI()
    counts = {"uploads": 0, "lost": 0}
    http = httpx.AsyncClient(base_url=upstream, timeout=60)

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get("/proxy/uploads")
    async def uploads() -> dict[str, int]:
        return counts

    @app.api_route("/{path:path}", methods=["GET", "POST", "DELETE"])
    async def forward(path: str, request: Request) -> Response:
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP_HEADERS}
        upstream_response = await http.request(
            request.method,
            f"/{path}",
            params=request.query_params,
            headers=headers,
            content=await request.body(),
        )
        if request.method == "POST" and path == "v1/files" and upstream_response.is_success:
            counts["uploads"] += 1
            if counts["lost"] < lose_uploads:
                counts["lost"] += 1
                message = {"error": {"message": "upstream response lost", "type": "server_error"}}
                return JSONResponse(message, status_code=502)
        kept = {k: v for k, v in upstream_response.headers.items() if k.lower() not in _HOP_HEADERS}
        kept.pop("content-encoding", None)
        return Response(upstream_response.content, upstream_response.status_code, kept)

    return app


def main() -> None:
    parser = argparse.ArgumentParser(description="FAULT-INJECTING Files proxy (tests only)")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True)
    parser.add_argument("--lose-uploads", type=int, default=1)
    args = parser.parse_args()
    uvicorn.run(
        create_app(args.upstream, args.lose_uploads),
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
