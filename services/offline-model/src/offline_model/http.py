"""Small HTTP helpers shared by the two model APIs."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import orjson
from starlette.responses import Response


def json_response(body: Any, status_code: int = 200) -> Response:
    return Response(orjson.dumps(body), status_code=status_code, media_type="application/json")


def error(
    message: str, param: str | None = None, status_code: int = 400, code: str | None = None
) -> Response:
    kind = "server_error" if status_code >= 500 else "invalid_request_error"
    body = {"message": message, "type": kind, "param": param, "code": code}
    return json_response({"error": body}, status_code)


class RequestError(Exception):
    """A request offline-model cannot serve; the app answers it in the OpenAI envelope."""

    def __init__(
        self,
        message: str,
        param: str | None = None,
        *,
        status_code: int = 400,
        code: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.param, self.status_code, self.code = message, param, status_code, code

    def response(self) -> Response:
        return error(self.message, self.param, self.status_code, self.code)


def truncate(tokens: list[str], limit: Any) -> tuple[list[str], bool]:
    """Cap the answer at ``limit`` tokens, as a provider's max-tokens setting does."""
    if isinstance(limit, int) and 0 < limit < len(tokens):
        return tokens[:limit], True
    return tokens, False


async def paced(tokens: list[str], delay: float) -> AsyncIterator[str]:
    for token in tokens:
        if delay:
            await asyncio.sleep(delay)
        yield token
