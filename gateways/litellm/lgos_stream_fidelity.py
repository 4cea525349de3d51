"""LiteLLM callback: streamed terminal events keep the usage LGOS sent (or none), and an
upstream ``response.failed`` reaches the client as LGOS sent it.

LiteLLM 1.108.7 estimates usage for a streamed ``response.completed``/``incomplete`` whose
upstream reported none (graphs without model calls, interrupt pauses) and writes it without
``input_tokens_details``/``output_tokens_details``, a shape the OpenAI schema rejects (strict SDK
clients fail). LGOS always sends both details when it reports usage, so a usage object without
them is LiteLLM's estimate: this hook removes it, restoring what LGOS streamed.

It is a stream *iterator* hook, not the cheaper per-chunk deployment hook: only a wrapper
around the whole stream sees the upstream's ``response.failed`` that LiteLLM raises on (see
``upstream_failure``). Its cost per chunk is an async generator layer; the hooks' share of the
gateway hop stays under 1 % (``scripts/bench_gateway.py --hooks-share``,
docs/project/reliability.md).
Runs inside LiteLLM's own venv (.tools/litellm), via lgos_callbacks.py.
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


def upstream_failure(stream: Any) -> Any:
    """The upstream's own ``response.failed`` event, if the stream just stopped at one.

    LiteLLM 1.108.7 raises on an upstream ``response.failed`` (for mid-stream fallbacks) and the
    proxy then writes a failure of its own: no output (the partial answer is lost) and without
    ``tools``/``tool_choice``/``parallel_tool_calls``, which strict SDK clients reject (measured).
    The provider iterator keeps the terminal event it parsed in ``completed_response``; the
    router's fallback wrapper (what the hook is handed) holds that iterator as
    ``_billing_source`` (private in 1.108.7: the gateway tests catch a rename).
    """
    for source in (stream, getattr(stream, "_billing_source", None)):
        terminal = getattr(source, "completed_response", None)
        if _field(terminal, "type") == "response.failed":
            return terminal
    return None


class RestoreUpstreamUsage(CustomLogger):
    async def async_post_call_streaming_iterator_hook(
        self, user_api_key_dict: Any, response: Any, request_data: dict[str, Any]
    ) -> AsyncGenerator[Any, None]:
        try:
            async for chunk in response:
                yield without_estimated_usage(chunk)
        except Exception:
            failed = upstream_failure(response)
            if failed is None:
                raise
            # What LGOS sent, unchanged: the proxy then adds no failure event of its own.
            yield failed


# Standalone, for measuring the hooks one by one (scripts/bench_gateway.py --hooks-share).
restore_upstream_usage = RestoreUpstreamUsage()
