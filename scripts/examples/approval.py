"""Human-in-the-loop approval: the graph pauses with an lgos_interrupt call; we answer it.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/approval.py
"""

from __future__ import annotations

import json
from typing import Any

from connect import lgos_client


def review_call(response: Any) -> Any:
    """The ``lgos_interrupt`` function call a paused response ends with."""
    return next(
        item
        for item in response.output
        if item.type == "function_call" and item.name == "lgos_interrupt"
    )


def answer(review: Any, output: str) -> list[dict[str, Any]]:
    """The input that resumes the paused run: ``approve``, ``reject`` or revision feedback."""
    return [{"type": "function_call_output", "call_id": review.call_id, "output": output}]


if __name__ == "__main__":
    client = lgos_client()
    pending = client.responses.create(
        model="interruptible-approval",
        input="Remember this exact note: retries need idempotency keys.",
        store=False,
    )
    review = review_call(pending)
    print(f"lgos_interrupt asks: {json.loads(review.arguments)['question']}")
    # Persist pending.id and review.call_id before asking a person: a reconnect needs both.
    completed = client.responses.create(
        model="interruptible-approval",
        previous_response_id=pending.id,
        input=answer(review, "approve"),  # type: ignore[arg-type]
        store=False,
    )
    print(completed.output_text)
