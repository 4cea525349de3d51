"""The web_search tool against the real SearXNG process over its seeded local corpus."""

from __future__ import annotations

import json
from typing import Any

import pytest
from lgos_demo_graphs.web_search import WebSearchSettings, searxng_search, web_search

from tests.support.servers import SEARXNG_DIR, Server

CORPUS_URLS = {d["url"] for d in json.loads((SEARXNG_DIR / "corpus.json").read_text())}


async def test_searxng_json_api_returns_corpus_documents(searxng: Server) -> None:
    results = await searxng_search(
        "langgraph interrupt guidance", WebSearchSettings(url=searxng.url)
    )
    assert results, "the seeded corpus has interrupt documents"
    assert results[0].url == "https://docs.langchain.com/oss/python/langgraph/interrupts"
    assert {r.url for r in results} <= CORPUS_URLS
    assert all(r.title for r in results)


async def search_tool_call(searxng: Server, call_id: str, query: str) -> Any:
    """The tool as a graph's ToolNode calls it, configured (DEMO_API_*) for this SearXNG."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("DEMO_API_WEB_SEARCH_URL", searxng.url)
        call = {"type": "tool_call", "id": call_id, "name": "web_search", "args": {"query": query}}
        return await web_search.ainvoke(call)


async def test_tool_returns_text_for_the_model_and_urls_as_artifact(searxng: Server) -> None:
    message = await search_tool_call(searxng, "call_1", "advisory locks idempotency")
    urls = [source["url"] for source in message.artifact]
    assert urls[0] == "https://www.postgresql.org/docs/current/explicit-locking.html"
    for url in urls:
        assert url in message.content


async def test_no_match_is_an_empty_result(searxng: Server) -> None:
    message = await search_tool_call(searxng, "call_2", "zzzqqq unmatched")
    assert message.content == "No results."
    assert message.artifact == []
