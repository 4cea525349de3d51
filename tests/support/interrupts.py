"""Answering a paused run: the ``function_call_output`` items that resume an interrupt."""

from __future__ import annotations

from typing import Any


def answer(call: Any, output: str) -> dict[str, Any]:
    """The input item answering the interrupt ``call`` (an ``lgos_interrupt`` function call)."""
    return {"type": "function_call_output", "call_id": call.call_id, "output": output}


def resume_of(paused: Any, output: str, **extra: Any) -> dict[str, Any]:
    """The request that answers ``paused``'s first interrupt with ``output`` on the same model."""
    return {
        "model": paused.model,
        "previous_response_id": paused.id,
        "input": [answer(paused.output[0], output)],
        **extra,
    }
