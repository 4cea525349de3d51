"""The public ``web_search`` tool: an ordinary LangChain tool over a configurable backend.

``DEMO_API_WEB_SEARCH_BACKEND=searxng`` (default) queries SearXNG's JSON API at
``DEMO_API_WEB_SEARCH_URL``; ``openai`` makes a private upstream Responses ``web_search`` call
with the configured real model. Either way the tool returns the same text for the model and
keeps the exact result URLs as its artifact, which the answer node cites from.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal

import httpx
from langchain_core.tools import tool
from pydantic_settings import BaseSettings, SettingsConfigDict
from service_kit.context import inject_httpx

from lgos_demo_graphs.citations import Source


class WebSearchSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="DEMO_API_WEB_SEARCH_", env_ignore_empty=True)

    backend: Literal["searxng", "openai"] = "searxng"
    url: str = "http://127.0.0.1:3005"
    max_results: int = 3
    timeout: float = 10.0


@dataclass(frozen=True, slots=True)
class SearchResult:
    url: str
    title: str
    snippet: str


async def searxng_search(query: str, settings: WebSearchSettings) -> list[SearchResult]:
    async with httpx.AsyncClient(
        base_url=settings.url, timeout=settings.timeout, event_hooks={"request": [inject_httpx]}
    ) as http:
        response = await http.get("/search", params={"q": query, "format": "json"})
        response.raise_for_status()
    results = response.json().get("results", [])
    return [
        SearchResult(str(r["url"]), str(r.get("title") or r["url"]), str(r.get("content") or ""))
        for r in results[: settings.max_results]
        if r.get("url")
    ]


SEARCH_RUN_NAME = "web_search_model"


async def openai_search(query: str, settings: WebSearchSettings) -> list[SearchResult]:
    """A private upstream Responses call with OpenAI's built-in web_search (needs a real key).

    Private like every other call but the answer: one whole, non-streamed reply
    (``disable_streaming``), tagged ``nostream`` so a streaming run never shows its text as answer
    deltas, and ``store=false`` (nothing kept upstream). Only its cited URLs become results.
    """
    from lgos_demo_graphs.model import chat_model

    model = (
        chat_model(use_responses_api=True, store=False, disable_streaming=True)
        .bind_tools([{"type": "web_search"}])
        .with_config(tags=["nostream"], run_name=SEARCH_RUN_NAME)
    )
    reply = await model.ainvoke(query)
    results: list[SearchResult] = []
    for block in reply.content if isinstance(reply.content, list) else []:
        if not isinstance(block, dict):
            continue
        for annotation in block.get("annotations") or ():
            if annotation.get("type") in ("url_citation", "citation") and annotation.get("url"):
                results.append(
                    SearchResult(annotation["url"], annotation.get("title") or "", block["text"])
                )
    return results[: settings.max_results]


def render(results: list[SearchResult]) -> str:
    if not results:
        return "No results."
    return "\n".join(f"[{i}] {r.title} {r.url} {r.snippet}" for i, r in enumerate(results, 1))


def sources_of(artifact: Any) -> list[Source]:
    """The exact URLs a web_search ToolMessage returned (its artifact)."""
    return [Source(r["url"], r["title"]) for r in artifact or () if isinstance(r, dict)]


@tool(response_format="content_and_artifact")
async def web_search(query: str) -> tuple[str, list[dict[str, str]]]:
    """Search the web and return the top results with their URLs."""
    settings = WebSearchSettings()
    backend = openai_search if settings.backend == "openai" else searxng_search
    results = await backend(query, settings)
    return render(results), [asdict(r) for r in results]
