"""Stream status-events and show commentary apart from the final answer, as UIs should.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/status_commentary.py
"""

from __future__ import annotations

from connect import lgos_client

client = lgos_client()

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
