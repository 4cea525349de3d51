"""API keys on real PostgreSQL and Redis across two LGOS processes (and a worker): a key's
interrupt runs, background Responses and idempotency keys are, for another key, the same
404 or 409 as ones that never existed."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Iterator

import httpx
import openai
import pytest
import redis
from openai import AsyncOpenAI

from tests.support.background import poll, slow_background
from tests.support.clients import sdk_client
from tests.support.servers import Server, serve_lgos
from tests.support.shared_state import REDIS_URL, shared_env

KEY_A, KEY_B = "sk-lgos-tenant-a", "sk-lgos-tenant-b"
KEYS = {KEY_A: "tenant-a", KEY_B: "tenant-b"}
TARGET = "tests.support.graphs:create_registry"
NEVER_ISSUED = "resp_lg_" + "0" * 32 + "_" + "1" * 32


@pytest.fixture(scope="module")
def keyed(
    postgres_uri: str, offline_model: Server, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Server, Server]]:
    logs = tmp_path_factory.mktemp("api-keys")
    queue = f"lgos-test-keys:{uuid.uuid4().hex[:8]}"
    env = {
        **shared_env(postgres_uri, offline_model, logs, 5.0),
        "LGOS_API_KEYS": ",".join(f"{k}={s}" for k, s in KEYS.items()),
        "LGOS_BACKGROUND": "distributed",
        "LGOS_BACKGROUND_QUEUE": queue,
    }
    with (
        serve_lgos("serve", TARGET, env=env, log=logs / "a.log") as a,
        serve_lgos("serve", TARGET, env=env, log=logs / "b.log") as b,
        serve_lgos("worker", TARGET, env=env, log=logs / "worker.log"),
    ):
        yield a, b
    redis.Redis.from_url(REDIS_URL).delete(queue)


@pytest.fixture
async def tenants(keyed: tuple[Server, Server]) -> AsyncIterator[tuple[AsyncOpenAI, AsyncOpenAI]]:
    """Tenant A on the first process, tenant B on the second."""
    a, b = keyed
    async with (
        sdk_client(f"{a.url}/v1", api_key=KEY_A) as ca,
        sdk_client(f"{b.url}/v1", api_key=KEY_B) as cb,
    ):
        yield ca, cb


async def test_missing_and_wrong_keys_are_openai_401s(keyed: tuple[Server, Server]) -> None:
    a, _ = keyed
    async with sdk_client(f"{a.url}/v1", api_key="sk-wrong") as client:
        with pytest.raises(openai.AuthenticationError) as caught:
            await client.models.list()
    assert caught.value.code == "invalid_api_key"
    assert caught.value.body["type"] == "invalid_request_error"
    async with httpx.AsyncClient(base_url=a.url) as http:
        for path in ("/v1/models", "/v1/responses/" + "resp_" + "0" * 32):
            missing = await http.get(path)
            assert missing.status_code == 401
            assert missing.headers["www-authenticate"] == "Bearer"
            error = missing.json()["error"]
            assert (error["type"], error["code"], error["param"]) == (
                "invalid_request_error",
                None,
                None,
            )
        assert (await http.post("/v1/responses", json={"model": "scripted"})).status_code == 401
        assert (await http.get("/health")).status_code == 200  # health stays open for probes
    for text in (caught.value.message, str(caught.value.body)):
        assert "sk-lgos-tenant" not in text


async def test_another_keys_interrupt_run_is_a_conflict_like_an_unknown_one(
    tenants: tuple[AsyncOpenAI, AsyncOpenAI],
) -> None:
    a, b = tenants
    paused = await a.responses.create(model="interruptible-approval", input="Ship it")
    [call] = paused.output
    answer = [{"type": "function_call_output", "call_id": call.call_id, "output": "approve"}]
    codes = []
    for previous in (paused.id, NEVER_ISSUED):
        with pytest.raises(openai.ConflictError) as caught:
            await b.responses.create(
                model="interruptible-approval", previous_response_id=previous, input=answer
            )
        codes.append((caught.value.code, caught.value.message))
    assert codes[0] == codes[1]  # nothing tells B that A's run exists
    # B's attempt changed nothing: A resumes its run (on the other process) as if alone.
    async with sdk_client(str(b.base_url), api_key=KEY_A) as a_on_b:
        done = await a_on_b.responses.create(
            model="interruptible-approval", previous_response_id=paused.id, input=answer
        )
    assert done.output_text.startswith("Decision: approved.")


async def test_another_keys_background_response_is_not_found(
    tenants: tuple[AsyncOpenAI, AsyncOpenAI],
) -> None:
    a, b = tenants
    queued = await a.responses.create(**slow_background("mine", 0.2))
    messages = []
    for response_id in (queued.id, "resp_" + "0" * 32):
        with pytest.raises(openai.NotFoundError) as retrieved:
            await b.responses.retrieve(response_id)
        with pytest.raises(openai.NotFoundError):
            await b.responses.cancel(response_id)
        messages.append(retrieved.value.message.replace(response_id, "ID"))
    assert messages[0] == messages[1]
    assert (await poll(a, queued.id)).status == "completed"  # B's cancel did nothing


async def test_idempotency_keys_belong_to_their_api_key(
    tenants: tuple[AsyncOpenAI, AsyncOpenAI],
) -> None:
    a, b = tenants
    header = {"Idempotency-Key": f"shared-{uuid.uuid4().hex}"}
    body = slow_background("once", 0.1)
    mine = await a.responses.create(**body, extra_headers=header)
    # The same key and body from B: B's own Response, not A's (and no 422 revealing A's use).
    theirs = await b.responses.create(**{**body, "input": "other"}, extra_headers=header)
    assert theirs.id != mine.id
    again = await b.responses.create(**{**body, "input": "other"}, extra_headers=header)
    assert again.id == theirs.id
    assert (await a.responses.create(**body, extra_headers=header)).id == mine.id


async def test_metadata_user_and_safety_identifier_never_choose_the_scope(
    tenants: tuple[AsyncOpenAI, AsyncOpenAI],
) -> None:
    a, b = tenants
    queued = await a.responses.create(
        model="slow-background",
        input="x",
        background=True,
        user="tenant-b",
        safety_identifier="tenant-b",
        metadata={"tenant": "tenant-b"},
    )
    with pytest.raises(openai.NotFoundError):
        await b.responses.retrieve(queued.id, extra_headers={"x-lgos-scope": "tenant-a"})
    assert (await poll(a, queued.id)).status == "completed"
