"""LiteLLM callback: a client's ``Idempotency-Key`` and ``X-Request-Id`` reach LGOS.

LGOS makes background creates idempotent with the IETF ``Idempotency-Key`` header, so a retrying
SDK or gateway cannot start a second run. LiteLLM 1.108.7 forwards only ``x-`` client headers to
the upstream (and only with ``forward_client_headers_to_llm_api``), so without this hook the key is
dropped and every retry through the gateway starts a new run (measured). The caller's
``X-Request-Id`` (a UI sends one per chat turn) is dropped the same way; carried, LGOS keeps it,
so one id follows a turn from the UI's log into LGOS's. The hook copies these two headers into
the upstream request's ``extra_headers``; nothing else is forwarded.
Runs inside LiteLLM's own venv (.tools/litellm), via lgos_callbacks.py.
"""

from __future__ import annotations

from typing import Any

from litellm.integrations.custom_logger import CustomLogger

HEADER = "Idempotency-Key"
REQUEST_ID = "X-Request-Id"
FORWARDED = (HEADER, REQUEST_ID)


def client_header(data: dict[str, Any], wanted: str) -> str | None:
    request = data.get("proxy_server_request") or {}
    headers = request.get("headers") or {}
    for name, value in headers.items():
        if name.lower() == wanted.lower():
            return str(value)
    return None


def with_idempotency_key(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` with the caller's Idempotency-Key and X-Request-Id in its upstream headers."""
    found = {name: client_header(data, name) for name in FORWARDED}
    given = {name: value for name, value in found.items() if value is not None}
    if given:
        data["extra_headers"] = {**(data.get("extra_headers") or {}), **given}
    return data


class ForwardIdempotencyKey(CustomLogger):
    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        return with_idempotency_key(data)


# Standalone, for measuring the hooks one by one (scripts/bench_gateway.py --hooks-share).
forward_idempotency_key = ForwardIdempotencyKey()
