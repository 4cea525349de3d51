"""Every Python SDK example of the advanced-graph page, through the gateway.

OPENAI_GATEWAY_API_KEY=... python scripts/examples/advanced_graph.py
(OPENAI_BASE_URL overrides the gateway URL, http://127.0.0.1:$OPENAI_GATEWAY_PORT/v1, the stack's
gateway port, 3000 by default; ADVANCED_GRAPH_MODEL overrides the model, lgos/advanced-graph.)

Runs chat, a file summary, Web search with citations, the calculate_sum function round trip and a
save → review → approve, each printed under its own heading. With no model key the stack answers
with offline-model, the deterministic stand-in, and says so in every answer. The function round
trip, the citations and the review come from the examples that show each one alone
(client_function.py, web_search_citations.py, approval.py).
"""

from __future__ import annotations

import json
import os
from typing import Any

from approval import answer, review_call
from client_function import round_trip
from openai import OpenAI
from web_search_citations import url_citations

gateway_url = os.environ.get(
    "OPENAI_BASE_URL", f"http://127.0.0.1:{os.getenv('OPENAI_GATEWAY_PORT', '3000')}/v1"
)
client = OpenAI(base_url=gateway_url, api_key=os.environ["OPENAI_GATEWAY_API_KEY"])
model = os.environ.get("ADVANCED_GRAPH_MODEL", "lgos/advanced-graph")
files_query = {"provider": "litellm_proxy"}


def respond(input_items: Any, **options: Any) -> Any:
    return client.responses.create(model=model, input=input_items, store=False, **options)


print("== chat")
response = respond("Explain why idempotency matters in two short paragraphs.")
print(response.output_text)

print("== file summary")
uploaded = client.files.create(
    file=("brief.txt", b"The project marker is FILE_INPUT_OK."),
    purpose="user_data",
    extra_query=files_query,
)
try:
    response = respond(
        [
            {
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "Summarize this file."},
                    {"type": "input_file", "file_id": uploaded.id},
                ],
            }
        ]
    )
    print(response.output_text)
finally:
    client.files.delete(uploaded.id, extra_query=files_query)

print("== web search")
response = respond(
    "Find the current LangGraph interrupt guidance and cite it.",
    tools=[{"type": "web_search"}],
    tool_choice="required",
)
print(response.output_text)
print(url_citations(response))

print("== client function")
ledger: list[Any] = [{"role": "user", "content": "Add 12, 30, and 5."}]
_, completed = round_trip(client, model, ledger)
print(completed.output_text)

print("== save, review, approve")
pending = respond("Remember this exact note: retries need idempotency keys.")
review = review_call(pending)
print(json.loads(review.arguments))
completed = respond(answer(review, "approve"), previous_response_id=pending.id)  # or "reject"
print(completed.output_text)
