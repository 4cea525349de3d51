"""The web_search tool against the real SearXNG process over its seeded local corpus, and its
``openai`` backend against a FAKE hosted upstream (tests/support/search_upstream.py, in front
of the real offline-model): advanced-graph served by a real LGOS process, streamed and not."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from lgos_demo_graphs.web_search import WebSearchSettings, searxng_search, web_search

from tests.support.advanced import MODEL, advanced_lgos, demo_env
from tests.support.clients import sdk_client
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import FilesProcess
from tests.support.search_upstream import RESULT_URL, SEARCH_TEXT
from tests.support.servers import SEARXNG_DIR, Server, model_proxy

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


# -- DEMO_API_WEB_SEARCH_BACKEND=openai ------------------------------------------------------------


@pytest.fixture(scope="module")
def search_upstream(
    offline_model: Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    log = tmp_path_factory.mktemp("search-upstream") / "search-upstream.log"
    with model_proxy("tests.support.search_upstream", offline_model, log) as server:
        yield server


@pytest.fixture(scope="module")
def openai_search_lgos(
    search_upstream: Server,
    offline_model: Server,
    searxng: Server,
    files_process: FilesProcess,
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Server]:
    """advanced-graph with a "real" model key: every model call goes to the FAKE upstream."""
    env = {
        **demo_env(offline_model, searxng, files_process.server.url, None, FILES_KEY),
        "DEMO_API_OPENAI_API_KEY": "sk-fake-upstream",
        "DEMO_API_OPENAI_BASE_URL": f"{search_upstream.url}/v1",
        "DEMO_API_OPENAI_MODEL": "fake-search-model",
        "DEMO_API_WEB_SEARCH_BACKEND": "openai",
    }
    with advanced_lgos(Path(tmp_path_factory.mktemp("openai-search")), env) as server:
        yield server


def searches(upstream: Server) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = httpx.get(f"{upstream.url}/searches", timeout=5).json()
    return found


QUESTION = "Search the web: how do LangGraph interrupts pause a run?"


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
async def test_openai_backend_makes_a_private_unstreamed_unstored_call(
    openai_search_lgos: Server, search_upstream: Server, streamed: bool
) -> None:
    before = len(searches(search_upstream))
    async with sdk_client(f"{openai_search_lgos.url}/v1") as client:
        options: Any = {"model": MODEL, "input": QUESTION, "store": False}
        options["tools"] = [{"type": "web_search"}]
        if streamed:
            stream = await client.responses.create(**options, stream=True)
            events = [event async for event in stream]
            assert events[-1].type == "response.completed", [e.type for e in events][-3:]
            response = events[-1].response
            commentary = {
                e.item.id
                for e in events
                if e.type == "response.output_item.added"
                and getattr(e.item, "phase", None) == "commentary"
            }
            assert commentary  # "Choosing sources", "Searching the web"
            deltas = [
                e
                for e in events
                if e.type == "response.output_text.delta" and e.item_id not in commentary
            ]
            final = next(
                i for i in response.output if i.type == "message" and i.phase == "final_answer"
            )
            # Every other streamed delta is the answer's: none is the search model's own text.
            assert deltas and {e.item_id for e in deltas} == {final.id}
            answer = final.content[0].text
            assert "".join(e.delta for e in deltas) == answer
            assert not answer.startswith(SEARCH_TEXT)
        else:
            response = await client.responses.create(**options)
    answered = [i for i in response.output if getattr(i, "phase", None) != "commentary"]
    assert [item.type for item in answered] == ["web_search_call", "message"]
    cited = [
        a.url
        for item in response.output
        if item.type == "message"
        for part in item.content
        for a in part.annotations
        if a.type == "url_citation"
    ]
    assert cited == [RESULT_URL]  # the upstream's result, cited by exact URL
    made = searches(search_upstream)[before:]
    assert len(made) == 1
    assert made[0]["stream"] in (None, False)  # one whole reply, never streamed
    assert made[0]["store"] is False  # nothing kept upstream
    assert made[0]["tools"] == [{"type": "web_search"}]
