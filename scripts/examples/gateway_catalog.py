"""Through the gateway: list the graphs with their descriptions, then stream a simple-graph answer.

OPENAI_GATEWAY_API_KEY=... python scripts/examples/gateway_catalog.py
(OPENAI_BASE_URL defaults to the stack's gateway, http://127.0.0.1:$OPENAI_GATEWAY_PORT/v1, port
3000 by default.)

The gateway's /v1/models keeps only routing names, so graph metadata comes from LiteLLM's native
catalog, /model/info, where the catalog sync put each graph's lgos extension in model_info.lgos.
"""

from __future__ import annotations

import json
import os
from typing import Any

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get(
        "OPENAI_BASE_URL", f"http://127.0.0.1:{os.getenv('OPENAI_GATEWAY_PORT', '3000')}/v1"
    ),
    api_key=os.environ["OPENAI_GATEWAY_API_KEY"],
)

catalog: Any = client.get("/model/info", cast_to=object)
print("graphs:")
for entry in sorted(catalog["data"], key=lambda e: e["model_name"]):
    lgos = entry["model_info"].get("lgos")
    if lgos is None:
        continue  # an operator-owned model, not an LGOS graph
    features = ", ".join(lgos["features"]) or "-"
    print(f"  {entry['model_name']:30} {lgos['description']}  [features: {features}]")

simple = next(e for e in catalog["data"] if e["model_name"] == "lgos/simple-graph")
settings = simple["model_info"]["lgos"]["client_settings"]
audiences = settings["json_schema"]["properties"]["audience"]["enum"]
print(f"\nlgos/simple-graph settings: audience in {audiences}, defaults {settings['defaults']}")

print("\nlgos/simple-graph (streamed through the gateway, audience=beginner):")
stream = client.responses.create(
    model="lgos/simple-graph",
    input="What does a gateway add in front of a model server?",
    metadata={"lgos_settings": json.dumps({"audience": "beginner"})},
    stream=True,
)
for event in stream:
    if event.type == "response.output_text.delta":
        print(event.delta, end="", flush=True)
    elif event.type == "response.completed":
        print(f"\n[{event.response.status}]")
