"""One request id from the caller to the model, the Files service and SearXNG, and no prompt,
file content or secret in any log.

Real processes: LGOS serving advanced-graph (JSON logs at the default level), offline-model
reached with a key as a provider would be, the Files service on PostgreSQL, SearXNG behind a
recording TCP proxy (the only way to see the headers it was sent). The test sends distinctive
prompts, note contents and secrets through a research run, a streamed turn, a reviewed save, a
background run and failing requests, then reads every log line.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from openai import AsyncOpenAI

from tests.support.advanced import (
    MODEL,
    advanced_lgos,
    answer_review,
    create_knowledge,
    demo_env,
    seed_note,
)
from tests.support.fault_proxy import FaultProxy
from tests.support.files import files_client, files_service
from tests.support.servers import Server, free_port, serve

LGOS_KEY = "sk-lgos-obs-secret-3e91d7"
MODEL_KEY = "sk-model-obs-secret-a04c6f"
FILES_KEY = "sk-files-obs-secret-77b2e0"
SECRETS = (LGOS_KEY, MODEL_KEY, FILES_KEY)
PROMPT = "quokka-prompt-5521"
NOTE = "narwhal-note-8812"
FILE_TEXT = "pangolin-file-4406"
CONTENTS = (PROMPT, NOTE, FILE_TEXT)


@dataclass
class Stack:
    lgos: Server
    files_url: str
    logs: Path
    searxng_proxy: FaultProxy


@pytest.fixture(scope="module")
def stack(searxng: Server, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    logs = tmp_path_factory.mktemp("request-ids")
    model_port = free_port()
    with (
        serve(
            ["offline_model", "--port", str(model_port)],
            port=model_port,
            env={},
            log=logs / "offline-model.log",
        ) as model,
        files_service(logs, FILES_KEY) as files_process,
        FaultProxy(searxng_port(searxng)) as proxy,
    ):
        files = files_process.server
        searx = dataclasses.replace(searxng, url=f"http://127.0.0.1:{proxy.port}")
        env = {
            **demo_env(model, searx, files.url, None, FILES_KEY),
            # The knowledge store is created by the first test, after LGOS started.
            "DEMO_API_VECTOR_STORE_ID_FILE": str(logs / "store-id"),
            "LGOS_API_KEYS": f"{LGOS_KEY}=tenant",
            "DEMO_API_OPENAI_API_KEY": MODEL_KEY,
            "DEMO_API_OPENAI_BASE_URL": f"{model.url}/v1",
            "DEMO_API_OPENAI_MODEL": "offline-model",
        }
        with advanced_lgos(logs, env) as lgos:
            yield Stack(lgos, files.url, logs, proxy)


def searxng_port(searxng: Server) -> int:
    port = urlsplit(searxng.url).port
    assert port is not None
    return port


@pytest.fixture(scope="module")
async def lgos(stack: Stack) -> AsyncIterator[AsyncOpenAI]:
    async with AsyncOpenAI(base_url=f"{stack.lgos.url}/v1", api_key=LGOS_KEY) as sdk:
        yield sdk


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.startswith("{")]


def served(path: Path, request_id: str, at_least: int = 1) -> list[dict[str, Any]]:
    """The ``request`` lines a service wrote for ``request_id``, once ``at_least`` are there (a
    service writes its line as its response ends, which its caller may see a moment before)."""
    deadline = time.monotonic() + 10
    while True:
        found = [
            r
            for r in records(path)
            if r["event"] == "request" and r.get("request_id") == request_id
        ]
        if len(found) >= at_least or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


async def test_a_research_run_carries_the_callers_id_to_every_service(
    stack: Stack, lgos: AsyncOpenAI
) -> None:
    async with files_client(f"{stack.files_url}/v1", api_key=FILES_KEY) as files:
        store = await create_knowledge(files, "request-ids")
        await seed_note(files, store, "seed.md", f"LangGraph persistence: {FILE_TEXT}.")
    (stack.logs / "store-id").write_text(store)
    stack.searxng_proxy.requests.clear()
    raw = await lgos.responses.with_raw_response.create(
        model=MODEL,
        input=f"Search the web and my knowledge for LangGraph persistence {PROMPT}.",
        tools=[{"type": "web_search"}],
        extra_headers={"X-Request-Id": "research-run-1"},
    )
    response = raw.parse()
    assert raw.headers["x-request-id"] == "research-run-1"
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    # The model was called at least twice (classification, answer), the Files service searched.
    assert len(served(stack.logs / "offline-model.log", "research-run-1", at_least=2)) >= 2
    searched = served(stack.logs / "files.log", "research-run-1")
    assert any(r["route"] == "/v1/vector_stores/{vector_store_id}/search" for r in searched)
    assert b"x-request-id: research-run-1" in bytes(stack.searxng_proxy.requests).lower()
    [line] = served(stack.logs / "lgos.log", "research-run-1")
    assert line["route"] == "/v1/responses" and line["status"] == 200
    assert line["duration_ms"] > 0


async def test_every_answer_and_error_carries_an_id(stack: Stack, lgos: AsyncOpenAI) -> None:
    async with httpx.AsyncClient(base_url=stack.lgos.url, timeout=60) as http:
        keyed = {"Authorization": f"Bearer {LGOS_KEY}"}
        answers = [
            await http.get("/v1/models"),  # 401
            await http.post("/v1/responses", headers=keyed, content=b"{"),  # 400
            await http.get("/v1/responses/resp_nope", headers=keyed),  # 404
            await http.get("/health"),
            await http.post(
                "/v1/chat/completions",
                headers={**keyed, "X-Request-Id": "bad id; <x>"},
                json={"model": "simple-graph", "messages": [{"role": "user", "content": PROMPT}]},
            ),
        ]
    assert [a.status_code for a in answers] == [401, 400, 404, 200, 200]
    ids = [a.headers["x-request-id"] for a in answers]
    assert all(i.startswith("req_") for i in ids) and len(set(ids)) == len(ids)
    lines = {i: served(stack.logs / "lgos.log", i)[0] for i in ids}
    assert [lines[i]["status"] for i in ids] == [401, 400, 404, 200, 200]
    assert lines[ids[-1]]["model"] == "simple-graph"

    async with lgos.responses.with_streaming_response.create(
        model=MODEL, input=f"Say hello {PROMPT}", stream=True, extra_headers={"X-Request-Id": "s1"}
    ) as streamed:
        assert streamed.headers["x-request-id"] == "s1"
        events = [event async for event in await streamed.parse()]
    assert events[-1].type == "response.completed"
    assert len(served(stack.logs / "offline-model.log", "s1")) >= 1


async def test_a_reviewed_save_and_a_background_run_log_their_ids(
    stack: Stack, lgos: AsyncOpenAI
) -> None:
    paused = await lgos.responses.create(
        model=MODEL,
        input=f"Remember this exact note: {NOTE}.",
        extra_headers={"X-Request-Id": "save-1"},
    )
    done = await lgos.responses.with_raw_response.create(
        model=MODEL,
        previous_response_id=paused.id,
        input=answer_review(paused, "approve"),
        extra_headers={"X-Request-Id": "save-2"},
    )
    assert done.headers["x-request-id"] == "save-2"
    assert "it is indexed" in done.parse().output_text
    uploads = [r["route"] for r in served(stack.logs / "files.log", "save-2")]
    assert "/v1/files" in uploads
    lines = records(stack.logs / "lgos.log")
    [first] = [r for r in lines if r["event"] == "request" and r.get("request_id") == "save-1"]
    assert first["response_id"] == paused.id and first["scope_hash"] and first["run_id"]
    assert "tenant" not in json.dumps(first)  # the scope itself stays out

    queued = await lgos.responses.create(
        model="background-report",
        input="report",
        background=True,
        extra_headers={"X-Request-Id": "bg-1"},
    )
    while queued.status in ("queued", "in_progress"):
        queued = await lgos.responses.retrieve(queued.id)
    assert queued.status == "completed"
    [line] = served(stack.logs / "lgos.log", "bg-1")
    assert line["response_id"] == queued.id and line["model"] == "background-report"


async def test_no_prompt_note_file_content_or_secret_in_any_log(
    stack: Stack, lgos: AsyncOpenAI
) -> None:
    logs = sorted(stack.logs.glob("*.log"))
    assert {p.name for p in logs} >= {"lgos.log", "files.log", "offline-model.log"}
    for path in logs:
        text = path.read_text()
        assert '"event":"request"' in text, f"{path.name} logged no request lines"
        for needle in (*SECRETS, *CONTENTS):
            assert needle not in text, f"{needle} in {path.name}"
