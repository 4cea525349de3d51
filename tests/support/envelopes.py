"""What every error a fuzzed service answers must be: the OpenAI error envelope."""

from __future__ import annotations

from typing import Any

import httpx
from schemathesis import Case

ENVELOPE_KEYS = {"message", "type", "param", "code"}


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
