"""advanced-graph's reviewed saves on shared PostgreSQL and Redis, across LGOS processes, and
through a lost upload response (a fault-injecting proxy in front of the real Files service).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import httpx
import openai
import pytest
from openai import AsyncOpenAI

from tests.support.advanced import (
    MODEL,
    advanced_lgos,
    answer_review,
    create_knowledge,
    demo_env,
    note_files,
    review_payload,
    store_file_ids,
)
from tests.support.clients import sdk_client, sdk_pair_fixture
from tests.support.files import API_KEY as FILES_KEY
from tests.support.files import FilesProcess, files_client
from tests.support.servers import Server, free_port, serve
from tests.support.shared_state import shared_env

LEASE_TTL = 5.0


@pytest.fixture(scope="module")
async def files(files_process: FilesProcess) -> AsyncIterator[AsyncOpenAI]:
    async with files_client(f"{files_process.server.url}/v1") as sdk:
        yield sdk


@pytest.fixture(scope="module")
async def store_id(files: AsyncOpenAI) -> str:
    return await create_knowledge(files, "advanced-graph-shared")


@pytest.fixture(scope="module")
def state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("advanced-shared")


@pytest.fixture(scope="module")
def two_servers(
    postgres_uri: str,
    offline_model: Server,
    searxng: Server,
    files_process: FilesProcess,
    store_id: str,
    state: Path,
) -> Iterator[tuple[Server, Server]]:
    env = {
        **shared_env(postgres_uri, offline_model, state, LEASE_TTL),
        **demo_env(offline_model, searxng, files_process.server.url, store_id, FILES_KEY),
    }
    with advanced_lgos(state, env, name="a") as a, advanced_lgos(state, env, name="b") as b:
        yield a, b


clients = sdk_pair_fixture("two_servers")


async def test_a_paused_review_resumes_on_the_other_process(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], files: AsyncOpenAI, store_id: str
) -> None:
    a, b = clients
    before = {f.id for f in await note_files(files)}
    paused = await a.responses.create(
        model=MODEL, input="Remember this exact note: canaries go out before full rollouts."
    )
    revised = await b.responses.create(
        model=MODEL,
        previous_response_id=paused.id,
        input=answer_review(paused, "Name the canary share: five percent."),
    )
    payload = review_payload(revised)
    assert "five percent" in payload["content"]
    assert payload["filename"] == review_payload(paused)["filename"]
    done = await a.responses.create(
        model=MODEL, previous_response_id=revised.id, input=answer_review(revised, "approve")
    )
    assert "it is indexed" in done.output_text
    new = [f for f in await note_files(files) if f.id not in before]
    assert [f.filename for f in new] == [payload["filename"]]
    assert new[0].id in await store_file_ids(files, store_id)
    with pytest.raises(openai.ConflictError):  # finished everywhere: no second save
        await b.responses.create(
            model=MODEL, previous_response_id=revised.id, input=answer_review(revised, "approve")
        )
    found = await b.responses.create(model=MODEL, input="Search my knowledge for canaries.")
    assert f"(file id {new[0].id})" in found.output_text


async def test_racing_approvals_save_once(
    clients: tuple[AsyncOpenAI, AsyncOpenAI], files: AsyncOpenAI
) -> None:
    a, b = clients
    before = {f.id for f in await note_files(files)}
    paused = await a.responses.create(model=MODEL, input="Save a note: racing approvals.")
    resume = {
        "model": MODEL,
        "previous_response_id": paused.id,
        "input": answer_review(paused, "approve"),
    }
    results = await asyncio.gather(
        a.responses.create(**resume), b.responses.create(**resume), return_exceptions=True
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    assert len(winners) == 1, results
    assert all(isinstance(r, openai.ConflictError) for r in results if r not in winners)
    assert len([f for f in await note_files(files) if f.id not in before]) == 1


@pytest.fixture
def lossy_files(files_process: FilesProcess, state: Path) -> Iterator[Server]:
    port = free_port()
    with serve(
        [
            "tests.support.lossy_files_proxy",
            "--port",
            str(port),
            "--upstream",
            files_process.server.url,
            "--lose-uploads",
            "1",
        ],
        port=port,
        env={},
        log=state / f"lossy-{port}.log",
    ) as proxy:
        yield proxy


async def test_an_approval_whose_upload_response_is_lost_stores_exactly_one_file(
    postgres_uri: str,
    offline_model: Server,
    searxng: Server,
    lossy_files: Server,
    files: AsyncOpenAI,
    store_id: str,
    state: Path,
) -> None:
    env = {
        **shared_env(postgres_uri, offline_model, state, LEASE_TTL),
        **demo_env(offline_model, searxng, lossy_files.url, store_id, FILES_KEY),
    }
    before = {f.id for f in await note_files(files)}
    with advanced_lgos(state, env, name="lossy") as server:
        async with sdk_client(f"{server.url}/v1") as client:
            paused = await client.responses.create(
                model=MODEL, input="Remember this exact note: uploads can be lost in transit."
            )
            done = await client.responses.create(
                model=MODEL, previous_response_id=paused.id, input=answer_review(paused, "approve")
            )
    async with httpx.AsyncClient() as http:
        counts = (await http.get(f"{lossy_files.url}/proxy/uploads")).json()
    assert counts == {"uploads": 1, "lost": 1}  # the first answer was lost; no second upload
    new = [f for f in await note_files(files) if f.id not in before]
    assert [f.filename for f in new] == [review_payload(paused)["filename"]]
    assert f"file id {new[0].id}" in done.output_text
    assert new[0].id in await store_file_ids(files, store_id)
