"""The one LiteLLM callback object config.yaml names: our stream-fidelity, idempotency and
trace-context hooks.

LiteLLM 1.108.7 walks its whole callback list for every streamed chunk (a runtime Protocol
``isinstance`` check and an awaited no-op per entry, measured with py-spy by
``scripts/bench_gateway.py``), so each extra ``CustomLogger`` costs per chunk even when it does
nothing there. The hooks therefore live on one object. Each module says why its hook exists.
Runs inside LiteLLM's own venv (.tools/litellm), named in config.yaml ``litellm_settings``.
"""

from __future__ import annotations

from typing import Any

from lgos_idempotency import with_idempotency_key
from lgos_stream_fidelity import RestoreUpstreamUsage
from lgos_trace_context import with_trace_context


class LgosCallbacks(RestoreUpstreamUsage):
    """One ``async_pre_call_hook`` for the two upstream headers, the stream iterator hook."""

    # Both named on this class itself: LiteLLM runs a pre-call hook only when it is in the
    # class's own ``vars()`` (an inherited one is skipped: measured, the Idempotency-Key got
    # lost); the stream iterator hook is looked up the same way (proxy/utils.py, leaf-class
    # ``__dict__``).
    async def async_pre_call_hook(
        self, user_api_key_dict: Any, cache: Any, data: dict[str, Any], call_type: Any
    ) -> dict[str, Any]:
        return with_trace_context(with_idempotency_key(data))

    async_post_call_streaming_iterator_hook = (
        RestoreUpstreamUsage.async_post_call_streaming_iterator_hook
    )


lgos_callbacks = LgosCallbacks()
