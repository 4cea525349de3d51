"""The OpenAI error envelope every service answers with, as tests check it."""

from __future__ import annotations

from collections.abc import Collection
from typing import TYPE_CHECKING, Any

import httpx
import openai

if TYPE_CHECKING:
    from schemathesis import Case

ENVELOPE_KEYS = {"message", "type", "param", "code"}


def envelope(message: str, type: str, param: str | None, code: str | None) -> dict[str, Any]:
    """An error's body as the SDK exposes it (``APIStatusError.body``)."""
    return {"message": message, "type": type, "param": param, "code": code}


def server_error(message: str, code: str) -> dict[str, Any]:
    """A 5xx error's body: ``server_error`` type, no param."""
    return envelope(message, "server_error", None, code)


def assert_rejected_field(
    error: openai.BadRequestError, param: str, field: str, unsupported: Collection[str]
) -> None:
    """A 400 naming ``param``; ``unsupported_parameter`` when its top-level ``field`` is an OpenAI
    field the protocol does not serve, ``unknown_parameter`` for a field OpenAI has not either."""
    assert error.param == param
    assert error.body["type"] == "invalid_request_error"  # type: ignore[index]
    if field in unsupported:
        assert error.code == "unsupported_parameter"
    elif param == "surprise":
        assert error.code == "unknown_parameter"


def assert_client_error(response: httpx.Response) -> dict[str, Any]:
    """A 4xx ``invalid_request_error`` envelope, and nothing else in the body; its error."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:500])
    body = response.json()
    assert set(body) == {"error"} and set(body["error"]) == ENVELOPE_KEYS, body
    assert body["error"]["type"] == "invalid_request_error"
    error: dict[str, Any] = body["error"]
    return error


def check_envelope(case: Case, status: int, body: object) -> None:
    """Schemathesis: any error status carries a valid envelope with a message, no traceback."""
    if status < 400:
        return
    assert isinstance(body, dict) and set(body) == {"error"}, (case.method, case.path, body)
    error = body["error"]
    assert isinstance(error, dict) and set(error) == ENVELOPE_KEYS, error
    assert isinstance(error["message"], str) and error["message"]
    assert "Traceback" not in error["message"]
