"""Stream status-events and show commentary apart from the final answer, as UIs should.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/status_commentary.py
"""

from __future__ import annotations

import os

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:3004/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "sk-lgos-local-only"),  # make dev's LGOS key
)

stream = client.responses.create(model="status-events", input="Plan a picnic.", stream=True)
for event in stream:
    if event.type == "response.output_item.done" and event.item.type == "message":
        text = "".join(
            part.text if part.type == "output_text" else f"(refused: {part.refusal})"
            for part in event.item.content
        )
        print(f"{'status' if event.item.phase == 'commentary' else 'answer'}: {text}")
    elif event.type in ("response.incomplete", "response.failed"):
        print(f"ended {event.response.status}")
