"""LiteLLM callback: a client's ``Idempotency-Key`` reaches LGOS.

LGOS makes background creates idempotent with the IETF ``Idempotency-Key`` header, so a retrying
SDK or gateway cannot start a second run. LiteLLM 1.108.7 forwards only ``x-`` client headers to
the upstream (and only with ``forward_client_headers_to_llm_api``), so without this hook the key is
dropped and every retry through the gateway starts a new run (measured). The hook copies the one
header into the upstream request's ``extra_headers``; nothing else is forwarded.
Runs inside LiteLLM's own venv (.tools/litellm), via lgos_callbacks.py.
"""

from __future__ import annotations

from typing import Any

from litellm.integrations.custom_logger import CustomLogger

HEADER = "Idempotency-Key"


def client_key(data: dict[str, Any]) -> str | None:
    request = data.get("proxy_server_request") or {}
    headers = request.get("headers") or {}
    for name, value in headers.items():
        if name.lower() == HEADER.lower():
            return str(value)
    return None


class ForwardIdempotencyKey(CustomLogger):
    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        key = client_key(data)
        if key is not None:
            data["extra_headers"] = {**(data.get("extra_headers") or {}), HEADER: key}
        return data


# Standalone, for measuring the hooks one by one (scripts/bench_gateway.py --hooks-share).
forward_idempotency_key = ForwardIdempotencyKey()
