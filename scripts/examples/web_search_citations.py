"""Select the web_search server tool and print the answer's url_citation URLs.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/web_search_citations.py
"""

from __future__ import annotations

import os

from openai import OpenAI

client = OpenAI(
    base_url=os.environ.get("OPENAI_BASE_URL", "http://127.0.0.1:3004/v1"),
    api_key=os.environ.get("OPENAI_API_KEY", "sk-lgos-local-only"),  # make dev's LGOS key
)
response = client.responses.create(
    model="server-tools",
    input="Find the current LangGraph interrupt guidance and cite it.",
    tools=[{"type": "web_search"}],
    tool_choice="required",
    store=False,
)
citations = [
    annotation.url
    for item in response.output
    if item.type == "message"
    for part in item.content
    if part.type == "output_text"
    for annotation in part.annotations
    if annotation.type == "url_citation"
]
print(response.output_text)
print(citations)
