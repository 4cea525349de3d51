"""List the graphs, then talk to simple-graph through Responses (streamed) and Chat Completions.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/quickstart.py
"""

from __future__ import annotations

import json

from connect import lgos_client

client = lgos_client()

print("models:")
for model in client.models.list():
    # A gateway may drop the lgos extension: fall back to the bare id.
    lgos = (model.model_extra or {}).get("lgos") or {}
    print(f"  {model.id:18} {lgos.get('description', '(no LGOS metadata)')}")

settings = {"audience": "expert"}
print("\nresponses (streamed, audience=expert):")
stream = client.responses.create(
    model="simple-graph",
    input="What does a checkpointer do?",
    metadata={"lgos_settings": json.dumps(settings)},
    stream=True,
)
for event in stream:
    if event.type == "response.output_text.delta":
        print(event.delta, end="", flush=True)
    elif event.type in ("response.completed", "response.incomplete", "response.failed"):
        print(f"\n[{event.response.status}] usage: {event.response.usage}")

print("\nchat completions:")
completion = client.chat.completions.create(
    model="simple-graph", messages=[{"role": "user", "content": "Say hello."}]
)
print(completion.choices[0].message.content)
