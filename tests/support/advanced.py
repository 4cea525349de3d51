"""advanced-graph under test: an LGOS process wired to the real Files service, SearXNG and
offline-model, a fresh knowledge vector store, and the helpers its tests share.

The SDK helpers (the calculate_sum tool, citations, the review call and its answer) are the SDK
examples' own (``scripts/examples``, on the tests' import path), so the tests check what users
copy."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from approval import answer, review_call
from client_function import CALCULATE_SUM as CALCULATE_SUM
from openai import AsyncOpenAI
from web_search_citations import url_citations

from tests.support.servers import Server, free_port, serve

MODEL = "advanced-graph"
REGISTRY = "lgos_demo_graphs.registry:create_registry"
citations = url_citations


def demo_env(
    offline_model: Server,
    searxng: Server,
    files_url: str,
    vector_store_id: str | None,
    files_key: str,
) -> dict[str, str]:
    """The DEMO_API_* settings an LGOS process serving advanced-graph needs."""
    env = {
        "DEMO_API_OFFLINE_MODEL_URL": f"{offline_model.url}/v1",
        "DEMO_API_WEB_SEARCH_URL": searxng.url,
        "DEMO_API_FILES_BASE_URL": f"{files_url}/v1",
        "DEMO_API_FILES_API_KEY": files_key,
        "DEMO_API_KNOWLEDGE_INDEX_TIMEOUT": "30",
    }
    if vector_store_id is not None:
        env["DEMO_API_VECTOR_STORE_ID"] = vector_store_id
    return env


@contextmanager
def advanced_lgos(
    state: Path, env: Mapping[str, str], *, name: str = "lgos", registry: str = REGISTRY
) -> Iterator[Server]:
    port = free_port()
    with serve(
        ["lgos", "serve", registry, "--port", str(port)],
        port=port,
        env={"LGOS_STATE_DIR": str(state / name), **env},
        log=state / f"{name}.log",
    ) as server:
        yield server


async def create_knowledge(files: AsyncOpenAI, name: str) -> str:
    store = await files.vector_stores.create(name=name)
    return store.id


async def seed_note(files: AsyncOpenAI, store_id: str, filename: str, text: str) -> str:
    uploaded = await files.files.create(file=(filename, text.encode()), purpose="assistants")
    attached = await files.vector_stores.files.create_and_poll(
        file_id=uploaded.id, vector_store_id=store_id, poll_interval_ms=50
    )
    assert attached.status == "completed", attached.last_error
    return uploaded.id


async def store_file_ids(files: AsyncOpenAI, store_id: str) -> list[str]:
    return [f.id async for f in files.vector_stores.files.list(store_id)]


async def note_files(files: AsyncOpenAI) -> list[Any]:
    """Every note the graph uploaded (Markdown files named note-…)."""
    return [
        f
        async for f in files.files.list(purpose="assistants")
        if f.filename.startswith("note-") and f.filename.endswith(".md")
    ]


def review_payload(response: Any) -> dict[str, Any]:
    payload: dict[str, Any] = json.loads(review_call(response).arguments)
    return payload


def answer_review(response: Any, output: str) -> list[dict[str, Any]]:
    return answer(review_call(response), output)
