"""Retrieval quality over a seeded corpus: every query must find its file in the top 3.

Full-text ranking runs on the machine's PostgreSQL; semantic ranking runs on the embedded
PostgreSQL with pgvector and the real packaged MiniLM model behind an OpenAI-compatible endpoint.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Iterator

import httpx
import openai
import psycopg
import pytest
from files_service.app import create_app
from openai import AsyncOpenAI

from tests.support.envelopes import server_error
from tests.support.files import attach, files_sdk, indexing_error, scratch_database, settings
from tests.support.files_corpus import CORPUS, PARAPHRASES, QUERIES
from tests.support.servers import Server, free_port


async def seed(sdk: AsyncOpenAI) -> tuple[str, dict[str, str]]:
    store = await sdk.vector_stores.create(name="seeded")
    names = {}
    for name, text in CORPUS.items():
        attached = await attach(sdk, store.id, name, text.encode())
        assert attached.status == "completed", attached.last_error
        names[attached.id] = name
    return store.id, names


async def misses(sdk: AsyncOpenAI, store_id: str, queries: dict[str, str]) -> list[str]:
    failed = []
    for query, expected in queries.items():
        page = await sdk.vector_stores.search(store_id, query=query, max_num_results=3)
        top = [hit.filename for hit in page.data]
        if expected not in top:
            failed.append(f"{query!r}: expected {expected}, got {top}")
    return failed


@pytest.fixture
def tmp_storage(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("storage"))


async def test_full_text_finds_each_file_in_top_3(files_db: str, tmp_storage: str) -> None:
    app = create_app(settings(postgres_uri=files_db, storage_dir=tmp_storage))
    async with files_sdk(app) as sdk:
        store_id, _ = await seed(sdk)
        assert await misses(sdk, store_id, QUERIES) == []


@pytest.fixture
def vector_db(vector_postgres: str) -> Iterator[str]:
    with scratch_database(vector_postgres) as uri:
        yield uri


@pytest.fixture
async def semantic(
    vector_db: str, minilm: Server, tmp_storage: str
) -> AsyncIterator[tuple[AsyncOpenAI, str]]:
    app = create_app(
        settings(postgres_uri=vector_db, storage_dir=tmp_storage, embeddings_url=f"{minilm.url}/v1")
    )
    async with files_sdk(app) as sdk:
        store_id, _ = await seed(sdk)
        yield sdk, store_id


async def test_semantic_ranking_finds_each_file_in_top_3(
    semantic: tuple[AsyncOpenAI, str],
) -> None:
    sdk, store_id = semantic
    assert await misses(sdk, store_id, QUERIES) == []


async def test_semantic_ranking_answers_paraphrases(semantic: tuple[AsyncOpenAI, str]) -> None:
    sdk, store_id = semantic
    assert await misses(sdk, store_id, PARAPHRASES) == []
    page = await sdk.vector_stores.search(store_id, query="bread fermentation", max_num_results=1)
    assert page.data[0].filename == "sourdough.md"
    assert 0 < page.data[0].score <= 1


async def test_embeddings_outage_is_reported_not_hidden(vector_db: str, tmp_storage: str) -> None:
    closed = free_port()  # nothing listens here: every embeddings call is refused
    app = create_app(
        settings(
            postgres_uri=vector_db,
            storage_dir=tmp_storage,
            embeddings_url=f"http://127.0.0.1:{closed}/v1",
        )
    )
    async with files_sdk(app) as sdk:
        store = await sdk.vector_stores.create(name="outage")
        attached = await attach(sdk, store.id, "a.txt", b"some text")
        failure = indexing_error(attached)
        assert failure.message == "The embeddings endpoint failed."
        with pytest.raises(openai.APIStatusError) as error:
            await sdk.vector_stores.search(store.id, query="text")
        assert error.value.status_code == 502
        assert error.value.body == server_error(
            "The embeddings endpoint failed; try again later.", "upstream_error"
        )


async def test_files_indexed_before_embeddings_stay_findable(
    vector_db: str, minilm: Server, tmp_storage: str
) -> None:
    """Turning embeddings on later: older chunks have none, and full text still finds them."""
    plain = create_app(settings(postgres_uri=vector_db, storage_dir=tmp_storage))
    async with files_sdk(plain) as sdk:
        store_id, _ = await seed(sdk)
    semantic_app = create_app(
        settings(postgres_uri=vector_db, storage_dir=tmp_storage, embeddings_url=f"{minilm.url}/v1")
    )
    async with files_sdk(semantic_app) as sdk:
        assert await misses(sdk, store_id, QUERIES) == []


async def test_chunks_embedded_by_another_model_fall_back_to_full_text(
    vector_db: str, minilm: Server, tmp_storage: str
) -> None:
    """Switching to a model of another dimension: older vectors cannot be compared (pgvector
    raises), so those chunks rank by their words instead of failing every search."""
    app = create_app(
        settings(postgres_uri=vector_db, storage_dir=tmp_storage, embeddings_url=f"{minilm.url}/v1")
    )
    async with files_sdk(app) as sdk:
        store_id, _ = await seed(sdk)
        with psycopg.connect(vector_db, autocommit=True) as conn:
            conn.execute("UPDATE chunks SET embedding = '[0.5, 0.5, 0.5]'::vector")
        assert await misses(sdk, store_id, QUERIES) == []


@pytest.mark.parametrize(
    ("length", "status"), [("-1", b" 400 "), ("oops", b" 400 "), (str(10**9), b" 413 ")]
)
def test_the_embeddings_server_refuses_bad_body_lengths(
    minilm: Server, length: str, status: bytes
) -> None:
    """Answered at once from the header: no read until the client hangs up, no huge buffer."""
    host, port = minilm.url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(
            f"POST /v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode()
        )
        assert status in sock.recv(200).split(b"\r\n")[0]


def test_the_embeddings_server_embeds_all_of_a_long_text(minilm: Server) -> None:
    """A chunk (800 tokens by default) is longer than MiniLM's 256-piece window: its vector must
    still reflect its end, not only its start."""
    filler = " ".join(
        f"The greenhouse tomatoes in bed {i} need watering and staking." for i in range(60)
    )
    tail = "Photons stay entangled across long optical fibre links in quantum networks."

    def embed(texts: list[str]) -> list[list[float]]:
        response = httpx.post(f"{minilm.url}/v1/embeddings", json={"input": texts}, timeout=60)
        response.raise_for_status()
        return [item["embedding"] for item in response.json()["data"]]

    whole, start, end = embed([f"{filler} {tail}", filler, tail])

    def cosine(a: list[float], b: list[float]) -> float:
        return sum(x * y for x, y in zip(a, b, strict=True))  # the vectors are normalised

    assert cosine(whole, end) > cosine(start, end) + 0.05
