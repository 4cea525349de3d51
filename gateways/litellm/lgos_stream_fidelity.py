"""LiteLLM callback: streamed terminal events keep the usage LGOS sent (or none).

LiteLLM 1.108.7 estimates usage for a streamed ``response.completed``/``incomplete`` whose
upstream reported none (graphs without model calls, interrupt pauses) and writes it without
``input_tokens_details``/``output_tokens_details``, a shape the OpenAI schema rejects (strict SDK
clients fail). LGOS always sends both details when it reports usage, so a usage object without
them is LiteLLM's estimate: this hook removes it, restoring what LGOS streamed.
Runs inside LiteLLM's own venv (.tools/litellm), named in config.yaml ``litellm_settings``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

from litellm.integrations.custom_logger import CustomLogger

TERMINAL = frozenset({"response.completed", "response.incomplete"})


def _field(value: Any, name: str) -> Any:
    return value.get(name) if isinstance(value, dict) else getattr(value, name, None)


def without_estimated_usage(chunk: Any) -> Any:
    if _field(chunk, "type") not in TERMINAL:
        return chunk
    response = _field(chunk, "response")
    usage = _field(response, "usage")
    if usage is None or _field(usage, "input_tokens_details") is not None:
        return chunk
    if isinstance(response, dict):
        restored: Any = {k: v for k, v in response.items() if k != "usage"}
    else:
        restored = response.model_copy(update={"usage": None})
    if isinstance(chunk, dict):
        return {**chunk, "response": restored}
    return chunk.model_copy(update={"response": restored})


class RestoreUpstreamUsage(CustomLogger):
    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[Any, None]:
        async for chunk in response:
            yield without_estimated_usage(chunk)


restore_upstream_usage = RestoreUpstreamUsage()
