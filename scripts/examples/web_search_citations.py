"""Select the web_search server tool and print the answer's url_citation URLs.

OPENAI_BASE_URL=http://127.0.0.1:3004/v1 python scripts/examples/web_search_citations.py
"""

from __future__ import annotations

from typing import Any

from connect import lgos_client


def url_citations(response: Any) -> list[str]:
    """The URLs the answer's text cites (its ``url_citation`` annotations), in order."""
    return [
        annotation.url
        for item in response.output
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
        for annotation in part.annotations
        if annotation.type == "url_citation"
    ]


if __name__ == "__main__":
    response = lgos_client().responses.create(
        model="server-tools",
        input="Find the current LangGraph interrupt guidance and cite it.",
        tools=[{"type": "web_search"}],
        tool_choice="required",
        store=False,
    )
    print(response.output_text)
    print(url_citations(response))
