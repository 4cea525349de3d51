"""Attaching ``url_citation``s for exact source URLs that appear in an answer.

Only URLs a tool or the graph's own context supplied are cited, and only where the answer
contains them verbatim: nothing is invented or rewritten.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import AIMessage


@dataclass(frozen=True, slots=True)
class Source:
    url: str
    title: str


def cite_exact_urls(message: AIMessage, sources: Sequence[Source]) -> AIMessage:
    """The same message (same id, so it is not streamed twice) with citation annotations."""
    text = message.text
    annotations: list[dict[str, Any]] = []
    for source in sources:
        start = text.find(source.url)
        if start < 0:
            continue
        end = start + len(source.url) - 1  # inclusive, as the contract defines end_index
        annotations.append(
            {
                "type": "citation",
                "url": source.url,
                "title": source.title,
                "start_index": start,
                "end_index": end,
                "cited_text": text[start : end + 1],
            }
        )
    if not annotations:
        return message
    block = {"type": "text", "text": text, "annotations": annotations}
    return message.model_copy(update={"content": [block]})
