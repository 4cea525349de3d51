"""LiteLLM callback: streamed terminal events keep the usage LGOS sent (or none).

LiteLLM 1.108.7 estimates usage for a streamed ``response.completed``/``incomplete`` whose
upstream reported none (graphs without model calls, interrupt pauses) and writes it without
``input_tokens_details``/``output_tokens_details``, a shape the OpenAI schema rejects (strict SDK
clients fail). LGOS always sends both details when it reports usage, so a usage object without
them is LiteLLM's estimate: this hook removes it, restoring what LGOS streamed.

It is LiteLLM's per-chunk deployment hook, which LiteLLM awaits for every callback anyway and
which sees each event right after the estimate is written. (A stream *iterator* hook would wrap
the whole stream in two more async generator layers per chunk: measured slower.)
Runs inside LiteLLM's own venv (.tools/litellm), via lgos_callbacks.py.
"""

from __future__ import annotations

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
    async def async_post_call_streaming_deployment_hook(
        self, request_data: dict[str, Any], response_chunk: Any, call_type: Any
    ) -> Any:
        # None keeps the chunk as it is: the common case costs one attribute read.
        restored = without_estimated_usage(response_chunk)
        return None if restored is response_chunk else restored


# Standalone, for measuring the hooks one by one (scripts/bench_gateway.py --hooks-share).
restore_upstream_usage = RestoreUpstreamUsage()
