"""The one LiteLLM callback object config.yaml names: our stream-fidelity and idempotency hooks.

LiteLLM 1.108.7 walks its whole callback list for every streamed chunk (a runtime Protocol
``isinstance`` check and an awaited no-op per entry, measured with py-spy by
``scripts/bench_gateway.py``), so each extra ``CustomLogger`` costs per chunk even when it does
nothing there. Both hooks therefore live on one object. Each module says why its hook exists.
Runs inside LiteLLM's own venv (.tools/litellm), named in config.yaml ``litellm_settings``.
"""

from __future__ import annotations

from lgos_idempotency import ForwardIdempotencyKey
from lgos_stream_fidelity import RestoreUpstreamUsage


class LgosCallbacks(ForwardIdempotencyKey, RestoreUpstreamUsage):
    """``async_pre_call_hook`` from one parent, the stream iterator hook from the other."""

    # Named on this class itself: LiteLLM runs a pre-call hook only when it is in the class's
    # own ``vars()`` (an inherited one is skipped: measured, the Idempotency-Key got lost); the
    # stream iterator hook is looked up the same way (proxy/utils.py, leaf-class ``__dict__``).
    async_pre_call_hook = ForwardIdempotencyKey.async_pre_call_hook
    async_post_call_streaming_iterator_hook = (
        RestoreUpstreamUsage.async_post_call_streaming_iterator_hook
    )


lgos_callbacks = LgosCallbacks()
