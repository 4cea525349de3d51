"""A gateway's error as a person reads it: the status and the OpenAI envelope's message.

Takes plain values (an SDK ``APIStatusError``'s ``status_code``, ``message`` and ``body``), so it
reads any SDK version's error; :func:`lgos_ui.turn.gateway_error` applies it to the exception.
"""

from __future__ import annotations

from collections.abc import Mapping


def gateway_error_text(status_code: int, message: str, body: object) -> str:
    """``The gateway answered 400: <the envelope's error.message>`` (the SDK's text otherwise)."""
    if isinstance(body, Mapping):
        error = body.get("error", body)
        if isinstance(error, Mapping) and isinstance(error.get("message"), str):
            message = error["message"]
    return f"The gateway answered {status_code}: {message}"
