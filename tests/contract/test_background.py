"""The background Responses contract, through the SDK, on every engine: the embedded
(in-process) backend in-process and over a socket, and the queue-backed backend (API and worker
processes over PostgreSQL and Redis). What only the queue-backed engine has is in
tests/integration/test_background_workers.py."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.background import TERMINAL, poll, slow, slow_background
from tests.support.clients import embedded_lgos, tenant_header
from tests.support.engines import ALL_ENGINES, engine_client
from tests.support.graphs import SCRIPTED_TEXT, SECRET

NEVER_ISSUED = "resp_" + "0" * 32


@pytest.fixture(params=ALL_ENGINES)
async def client(request: pytest.FixtureRequest) -> AsyncIterator[AsyncOpenAI]:
    """The same contract on each engine."""
    async with engine_client(request, request.param) as sdk:
        yield sdk


async def test_create_poll_completed(client: AsyncOpenAI) -> None:
    queued = await client.responses.create(**slow_background("report please", 0.3))
    assert queued.status == "queued"
    assert queued.background is True
    seen = await client.responses.retrieve(queued.id)
    assert seen.status in {"queued", "in_progress"}
    done = await poll(client, queued.id)
    assert done.status == "completed"
    assert done.id == queued.id
    assert done.output_text == SCRIPTED_TEXT
    assert done.background is True
    assert done.usage is not None  # usage reaches snapshots as in foreground Responses
    assert (done.usage.input_tokens, done.usage.output_tokens) == (3, 5)
    again = await client.responses.retrieve(queued.id)
    assert again.model_dump() == done.model_dump()  # terminal snapshots never change


async def test_cancel_in_progress_stays_cancelled(client: AsyncOpenAI, markers: Any) -> None:
    key = f"bg-cancel-{uuid.uuid4().hex[:8]}"
    queued = await client.responses.create(**slow_background(key, 3.0))
    for _ in range(50):
        if (markers / f"started-{key}").exists():
            break
        await asyncio.sleep(0.05)
    assert (await client.responses.retrieve(queued.id)).status == "in_progress"
    cancelled = await client.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"
    assert (await client.responses.cancel(queued.id)).model_dump() == cancelled.model_dump()
    await asyncio.sleep(0.3)
    assert (await client.responses.retrieve(queued.id)).status == "cancelled"
    assert (markers / f"cancelled-{key}").exists()  # the graph run itself was cancelled


async def test_cancel_right_after_create(client: AsyncOpenAI) -> None:
    queued = await client.responses.create(**slow_background("cancel at once", 2.0))
    cancelled = await client.responses.cancel(queued.id)
    assert cancelled.status == "cancelled"


async def test_cancelling_a_finished_response_returns_it_unchanged(client: AsyncOpenAI) -> None:
    queued = await client.responses.create(**slow_background("finish", 0))
    done = await poll(client, queued.id)
    assert (await client.responses.cancel(queued.id)).model_dump() == done.model_dump()


async def test_failure_is_final_and_keeps_the_partial_answer(client: AsyncOpenAI) -> None:
    queued = await client.responses.create(model="broken-background", input="x", background=True)
    failed = await poll(client, queued.id)
    assert failed.status == "failed"
    assert failed.error is not None
    assert failed.error.code == "server_error"
    assert failed.output[0].content[0].text == "A partial answer before the failure"
    assert SECRET not in failed.model_dump_json()
    await asyncio.sleep(0.3)
    assert (await client.responses.retrieve(queued.id)).status == "failed"  # no retry


async def test_a_job_cancelling_itself_fails_its_response(client: AsyncOpenAI) -> None:
    """Only a cancel request ends a Response cancelled; a stray CancelledError is a failure."""
    queued = await client.responses.create(
        model="self-cancelling-background", input="go", background=True
    )
    done = await poll(client, queued.id, timeout=8.0)
    assert done.status == "failed"
    assert done.error is not None
    assert (done.error.code, done.error.message) == ("server_error", "Internal server error")


async def test_graph_adapters_judge_the_request_at_submission(client: AsyncOpenAI) -> None:
    """A context_factory's InvalidRequestError rejects a background request as it would a
    foreground one, rather than queueing it to fail later as a server error."""
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="needs-tenant-background", input="x", background=True)
    assert (caught.value.code, caught.value.param) == ("tenant_required", "metadata.tenant")
    queued = await client.responses.create(
        model="needs-tenant-background", input="x", background=True, metadata={"tenant": "t"}
    )
    assert (await poll(client, queued.id)).status == "completed"


async def test_not_found_cases(client: AsyncOpenAI) -> None:
    foreground = await client.responses.create(model="scripted", input="x")
    for response_id in ("resp_unknown", NEVER_ISSUED, "resp_\x00", "r" * 5000, foreground.id):
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(response_id)
        with pytest.raises(openai.NotFoundError):
            await client.responses.cancel(response_id)


@pytest.mark.parametrize("store", [None, True, False])
async def test_background_accepts_every_store_spelling(
    client: AsyncOpenAI, store: bool | None
) -> None:
    # OpenAI runs background requests with store=false too; the engine keeps its record anyway.
    extra: dict[str, Any] = {} if store is None else {"store": store}
    queued = await client.responses.create(
        model="slow-background", input="kept", background=True, metadata=slow(0.1), **extra
    )
    assert queued.store is (True if store is None else store)
    done = await poll(client, queued.id)
    assert done.status == "completed"
    assert done.output_text == SCRIPTED_TEXT
    assert done.store is queued.store


@pytest.mark.parametrize(
    ("kwargs", "param"),
    [
        ({"model": "scripted", "background": True}, "background"),
        ({"model": "slow-background", "background": True, "stream": True}, "stream"),
    ],
)
async def test_background_rejections(
    client: AsyncOpenAI, kwargs: dict[str, Any], param: str
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(input="x", **kwargs)
    assert caught.value.param == param


async def test_idempotent_create_races_to_one_run(client: AsyncOpenAI) -> None:
    key = {"Idempotency-Key": f"key-{uuid.uuid4().hex}"}
    body = slow_background("once", 0.2)
    responses = await asyncio.gather(
        *(client.responses.create(**body, extra_headers=key) for _ in range(5))
    )
    assert len({r.id for r in responses}) == 1
    done = await poll(client, responses[0].id)
    retry = await client.responses.create(**body, extra_headers=key)
    assert retry.id == done.id
    assert retry.status == "completed"  # the original Response, nothing new started
    with pytest.raises(openai.UnprocessableEntityError) as reused:
        await client.responses.create(**{**body, "input": "other"}, extra_headers=key)
    assert reused.value.code == "idempotency_key_reused"


async def test_background_interrupt_pause_and_resume(client: AsyncOpenAI) -> None:
    queued = await client.responses.create(
        model="interruptible-approval", input="Ship in background", background=True
    )
    assert queued.id.startswith("resp_lg_")
    paused = await poll(client, queued.id)
    assert paused.status == "completed"
    [call] = paused.output
    assert call.name == "lgos_interrupt"
    answer = [{"type": "function_call_output", "call_id": call.call_id, "output": "approve"}]
    resumed = await client.responses.create(
        model="interruptible-approval",
        previous_response_id=paused.id,
        input=answer,
        background=True,
    )
    assert resumed.status == "queued"
    assert resumed.previous_response_id == paused.id
    done = await poll(client, resumed.id)
    assert done.output_text.startswith("Decision: approved.")
    # A stale background answer fails its own Response; nothing else changes.
    stale = await client.responses.create(
        model="interruptible-approval",
        previous_response_id=paused.id,
        input=answer,
        background=True,
    )
    failed = await poll(client, stale.id)
    assert failed.status == "failed"
    assert "interrupt_state_conflict" in failed.error.message
    assert (await client.responses.retrieve(resumed.id)).status == "completed"


async def test_in_progress_snapshots_show_the_partial_answer(client: AsyncOpenAI) -> None:
    queued = await client.responses.create(
        model="slow-stream-background", input="slowly", background=True
    )
    partials: list[str] = []
    while True:
        snapshot = await client.responses.retrieve(queued.id)
        if snapshot.status in TERMINAL:
            break
        if snapshot.output and snapshot.output[0].content:
            partials.append(snapshot.output[0].content[0].text)
        await asyncio.sleep(0.1)
    assert snapshot.output_text == SCRIPTED_TEXT
    assert any(0 < len(p) < len(SCRIPTED_TEXT) for p in partials), partials
    assert all(SCRIPTED_TEXT.startswith(p) for p in partials)
    assert snapshot.output[0].status == "completed"


async def test_other_scopes_see_nothing(tmp_path: Any, in_process_graphs: None) -> None:
    a, b = {"x-test-tenant": "a"}, {"x-test-tenant": "b"}
    async with embedded_lgos(tmp_path, scope_resolver=tenant_header) as client:
        body = slow_background("mine", 0.1)
        key = {"Idempotency-Key": "shared-key"}
        mine = await client.responses.create(**body, extra_headers={**a, **key})
        with pytest.raises(openai.NotFoundError) as hidden:
            await client.responses.retrieve(mine.id, extra_headers=b)
        with pytest.raises(openai.NotFoundError) as unknown:
            await client.responses.retrieve(NEVER_ISSUED, extra_headers=b)
        assert hidden.value.body["message"].replace(mine.id, "ID") == unknown.value.body[
            "message"
        ].replace(NEVER_ISSUED, "ID")  # the same answer as for an id that never existed
        with pytest.raises(openai.NotFoundError):
            await client.responses.cancel(mine.id, extra_headers=b)
        # Keys are scoped like runs: the same key in another scope names another Response.
        theirs = await client.responses.create(**body, extra_headers={**b, **key})
        assert theirs.id != mine.id
        assert (await poll(client.with_options(default_headers=a), mine.id)).status == "completed"


async def test_the_embedded_engine_forgets_ended_responses_after_retention(
    tmp_path: Any, in_process_graphs: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lgos.background import inprocess

    monkeypatch.setattr(inprocess, "PRUNE_INTERVAL", 0.0)
    async with embedded_lgos(tmp_path, background_retention=0.5) as client:
        body = slow_background("old", 0)
        old = await client.responses.create(**body)
        assert (await poll(client, old.id)).status == "completed"
        running = await client.responses.create(**{**body, "metadata": slow(2.0)})
        await asyncio.sleep(0.6)
        await client.responses.create(**body)  # a later submit prunes what is past retention
        with pytest.raises(openai.NotFoundError):
            await client.responses.retrieve(old.id)
        # Retention counts from the end: a Response still running is kept.
        assert (await client.responses.retrieve(running.id)).status in {"queued", "in_progress"}
        # A key that outlived its pruned Response names nothing: the retry starts a new run.
        key = {"Idempotency-Key": "outlived"}
        first = await client.responses.create(**body, extra_headers=key)
        assert (await poll(client, first.id)).status == "completed"
        await asyncio.sleep(0.6)
        retried = await client.responses.create(**body, extra_headers=key)
        assert retried.id != first.id
