"""Human-in-the-loop approval: the graph pauses with an lgos_interrupt call; we answer it.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/approval.py
"""

from __future__ import annotations

import json
import os

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:3004/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "sk-lgos-local-only"),  # make dev's LGOS key
)
pending = client.responses.create(
    model="interruptible-approval",
    input="Remember this exact note: retries need idempotency keys.",
    store=False,
)
review = next(
    item
    for item in pending.output
    if item.type == "function_call" and item.name == "lgos_interrupt"
)
print(f"lgos_interrupt asks: {json.loads(review.arguments)['question']}")
# Persist pending.id and review.call_id before asking a person: a reconnect needs both.
completed = client.responses.create(
    model="interruptible-approval",
    previous_response_id=pending.id,
    input=[{"type": "function_call_output", "call_id": review.call_id, "output": "approve"}],
    store=False,
)
print(completed.output_text)
