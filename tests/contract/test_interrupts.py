"""Interrupts through the SDK: pause, resume (streaming and not), every 400 and 409, batches,
the one-interrupt rule, replayed resumes, cleanup and expiry (embedded SQLite + in-process
leases here; Postgres, Redis and two processes in tests/integration)."""

from __future__ import annotations

import asyncio
import json
from datetime import timedelta
from typing import Any

import httpx
import openai
import pytest
from fastapi import FastAPI
from lgos.interrupts.ids import run_id_of
from lgos.interrupts.keys import thread_key
from lgos.interrupts.sweep import delete_expired_interrupt_runs
from lgos.scope import SHARED_SCOPE
from openai import AsyncOpenAI

from tests.support.background import slow
from tests.support.clients import embedded_lgos, sdk_client, tenant_header
from tests.support.interrupts import answer, resume_of
from tests.support.metadata import lgos_settings

MODEL = "interruptible-approval"


async def pause(client: AsyncOpenAI, model: str = MODEL, **kwargs: Any) -> Any:
    response = await client.responses.create(model=model, input="Rename the project", **kwargs)
    assert response.status == "completed"
    return response


async def test_pause_exposes_lgos_interrupt_calls(client: AsyncOpenAI) -> None:
    response = await pause(client)
    assert response.id.startswith("resp_lg_")
    [call] = response.output
    assert call.type == "function_call"
    assert call.name == "lgos_interrupt"
    assert call.call_id.startswith("call_lg_")
    assert json.loads(call.arguments) == {
        "question": "Approve this change? Proposed change: Rename the project",
        "choices": ["approve", "reject"],
        "allow_other": True,
    }


@pytest.mark.parametrize("stream", [False, True])
async def test_resume_approve_and_reject(client: AsyncOpenAI, stream: bool) -> None:
    for decision, expected in (
        ("approve", "Decision: approved."),
        ("reject", "Decision: rejected."),
    ):
        paused = await pause(client)
        kwargs: dict[str, Any] = resume_of(paused, decision)
        if stream:
            events = [e async for e in await client.responses.create(stream=True, **kwargs)]
            assert events[-1].type == "response.completed"
            done = events[-1].response
        else:
            done = await client.responses.create(**kwargs)
        assert done.output_text.startswith(expected)
        assert done.previous_response_id == paused.id
        assert done.id != paused.id
        assert run_id_of(done.id) == run_id_of(paused.id)


async def test_streamed_pause(client: AsyncOpenAI) -> None:
    events = [
        e
        async for e in await client.responses.create(
            model=MODEL, input="Stream the question", stream=True
        )
    ]
    final = events[-1]
    assert final.type == "response.completed"
    [call] = final.response.output
    assert call.name == "lgos_interrupt"
    kinds = [e.type for e in events]
    assert "response.function_call_arguments.done" in kinds
    assert final.response.id == events[0].response.id  # persist the terminal id


async def test_revision_loops_and_asks_again(client: AsyncOpenAI) -> None:
    paused = await pause(client)
    again = await client.responses.create(
        model=MODEL,
        previous_response_id=paused.id,
        input=[answer(paused.output[0], "mention the date")],
    )
    [call] = again.output
    assert "revised: mention the date" in json.loads(call.arguments)["question"]
    assert call.call_id != paused.output[0].call_id
    # The earlier pause is stale now.
    with pytest.raises(openai.ConflictError) as stale:
        await client.responses.create(
            model=MODEL,
            previous_response_id=paused.id,
            input=[answer(paused.output[0], "approve")],
        )
    assert stale.value.code == "interrupt_state_conflict"
    done = await client.responses.create(
        model=MODEL, previous_response_id=again.id, input=[answer(call, "approve")]
    )
    assert "Revisions requested: 1." in done.output_text


async def test_replayed_completed_resume_is_a_conflict(client: AsyncOpenAI) -> None:
    paused = await pause(client)
    resume = resume_of(paused, "approve")
    await client.responses.create(**resume)
    with pytest.raises(openai.ConflictError) as caught:
        await client.responses.create(**resume)
    assert caught.value.code == "interrupt_state_conflict"
    assert caught.value.status_code == 409


async def test_malformed_resumes_are_400(client: AsyncOpenAI) -> None:
    paused = await pause(client)
    call = paused.output[0]
    cases: list[tuple[dict[str, Any], str]] = [
        (
            {"previous_response_id": "resp_123", "input": [answer(call, "approve")]},
            "previous_response_id",
        ),
        (
            {
                "previous_response_id": paused.id,
                "input": [answer(call, "approve"), {"role": "user", "content": "also this"}],
            },
            "input[1].type",
        ),
        (
            {
                "previous_response_id": paused.id,
                "input": [{"type": "function_call_output", "call_id": "call_1", "output": "x"}],
            },
            "input[0].call_id",
        ),
        (
            {
                "previous_response_id": paused.id,
                "input": [answer(call, "approve"), answer(call, "reject")],
            },
            "input[1].call_id",
        ),
        (
            {
                "previous_response_id": paused.id,
                "input": [{**answer(call, "x"), "output": [{"type": "input_text", "text": "x"}]}],
            },
            "input[0].output",
        ),
        ({"previous_response_id": paused.id, "input": "approve"}, "input"),
    ]
    for extra, param in cases:
        with pytest.raises(openai.BadRequestError) as caught:
            await client.responses.create(model=MODEL, **extra)
        assert caught.value.param == param, extra
    # The run is untouched by the rejected requests.
    done = await client.responses.create(
        model=MODEL, previous_response_id=paused.id, input=[answer(call, "approve")]
    )
    assert done.output_text.startswith("Decision: approved.")


async def test_a_replayed_transcript_cannot_resume(client: AsyncOpenAI) -> None:
    paused = await pause(client)
    items: list[Any] = [{"role": "user", "content": "Rename the project"}]
    items += [item.model_dump(exclude_none=True) for item in paused.output]
    items.append(answer(paused.output[0], "approve"))
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model=MODEL, input=items)
    assert caught.value.param == "previous_response_id"
    # Answered interrupts replayed before a new message are ordinary history.
    items.append({"role": "user", "content": "Rename it again"})
    fresh = await client.responses.create(model=MODEL, input=items)
    assert fresh.output[0].name == "lgos_interrupt"


async def test_unknown_interrupt_id_is_a_conflict(client: AsyncOpenAI) -> None:
    paused = await pause(client)
    with pytest.raises(openai.ConflictError) as caught:
        await client.responses.create(
            model=MODEL,
            previous_response_id=paused.id,
            input=[
                {
                    "type": "function_call_output",
                    "call_id": "call_lg_" + "ab" * 16,
                    "output": "approve",
                }
            ],
        )
    assert caught.value.code == "interrupt_state_conflict"


async def test_parallel_interrupts_form_one_atomic_batch(client: AsyncOpenAI) -> None:
    paused = await client.responses.create(model="parallel-interrupts", input="go")
    calls = paused.output
    assert [c.name for c in calls] == ["lgos_interrupt", "lgos_interrupt"]
    assert {json.loads(c.arguments)["question"] for c in calls} == {"left?", "right?"}
    with pytest.raises(openai.ConflictError) as partial:
        await client.responses.create(
            model="parallel-interrupts",
            previous_response_id=paused.id,
            input=[answer(calls[0], "only one")],
        )
    assert partial.value.code == "interrupt_state_conflict"
    by_question = {json.loads(c.arguments)["question"]: c for c in calls}
    done = await client.responses.create(
        model="parallel-interrupts",
        previous_response_id=paused.id,
        input=[answer(by_question["left?"], "L"), answer(by_question["right?"], "R")],
    )
    assert done.output_text == "left=L right=R"


async def test_second_interrupt_in_one_node_is_rejected(client: AsyncOpenAI) -> None:
    paused = await client.responses.create(model="double-interrupt", input="go")
    resume = resume_of(paused, "one")
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(**resume)
    with pytest.raises(openai.ConflictError):  # the broken run was cleaned up
        await client.responses.create(**resume)


async def test_failure_after_resume_fails_and_cleans_up(client: AsyncOpenAI) -> None:
    settings = lgos_settings(seconds=0, fail=True)
    paused = await client.responses.create(model="slow-after-resume", input="go")
    resume = resume_of(paused, "yes", metadata=settings)
    events = [e async for e in await client.responses.create(stream=True, **resume)]
    assert events[-1].type == "response.failed"
    with pytest.raises(openai.ConflictError):
        await client.responses.create(**resume)


async def test_concurrent_resumes_exactly_one_wins(client: AsyncOpenAI) -> None:
    paused = await client.responses.create(model="slow-after-resume", input="race")
    resume = resume_of(paused, "go")
    results = await asyncio.gather(
        *(client.responses.create(**resume) for _ in range(3)), return_exceptions=True
    )
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, BaseException)]
    assert len(winners) == 1
    assert winners[0].output_text == "done after go"
    assert all(isinstance(r, openai.ConflictError) for r in losers)
    assert {r.code for r in losers} <= {"run_busy", "interrupt_state_conflict"}  # type: ignore[union-attr]


async def test_chat_is_refused_for_interrupt_models(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError):
        await client.chat.completions.create(
            model=MODEL, messages=[{"role": "user", "content": "x"}]
        )


async def test_completed_runs_leave_no_checkpoint_and_sweep_expires_paused_ones(
    lgos_app: FastAPI,
) -> None:
    transport = httpx.ASGITransport(app=lgos_app)
    async with httpx.AsyncClient(transport=transport, base_url="http://lgos.test") as http:
        client = sdk_client("http://lgos.test/v1", http)
        service = await lgos_app.state.lgos.interrupts.service()

        def key(response_id: str) -> dict[str, Any]:
            run_id = run_id_of(response_id)
            assert run_id is not None
            return {"configurable": {"thread_id": thread_key(SHARED_SCOPE, MODEL, run_id)}}

        paused = await pause(client)
        assert await service.saver.aget_tuple(key(paused.id)) is not None
        await client.responses.create(
            model=MODEL,
            previous_response_id=paused.id,
            input=[answer(paused.output[0], "approve")],
        )
        assert await service.saver.aget_tuple(key(paused.id)) is None

        abandoned = await pause(client)
        kept = await delete_expired_interrupt_runs(service.saver, timedelta(days=1))
        assert thread_key(SHARED_SCOPE, MODEL, run_id_of(abandoned.id)) not in kept  # type: ignore[arg-type]
        swept = await delete_expired_interrupt_runs(service.saver, timedelta(seconds=-1))
        assert key(abandoned.id)["configurable"]["thread_id"] in swept
        with pytest.raises(openai.ConflictError):
            await client.responses.create(
                model=MODEL,
                previous_response_id=abandoned.id,
                input=[answer(abandoned.output[0], "approve")],
            )


async def test_scopes_are_isolated(tmp_path: Any, in_process_graphs: None) -> None:
    async with embedded_lgos(tmp_path, scope_resolver=tenant_header) as client:
        paused = await pause(client, extra_headers={"x-test-tenant": "a"})
        resume = resume_of(paused, "approve")
        with pytest.raises(openai.ConflictError):
            await client.responses.create(**resume, extra_headers={"x-test-tenant": "b"})
        done = await client.responses.create(**resume, extra_headers={"x-test-tenant": "a"})
        assert done.output_text.startswith("Decision: approved.")


async def test_graphs_get_the_store(client: AsyncOpenAI) -> None:
    note = f"note-{id(client)}"
    noted = await client.responses.create(model="notes", input=f"remember {note}")
    assert noted.output_text == f"noted {note}"
    listed = await client.responses.create(model="notes", input="list")
    assert note in listed.output_text.split(" | ")


@pytest.mark.parametrize("background", [False, True])
async def test_a_first_run_longer_than_the_lease_pauses(
    tmp_path: Any, in_process_graphs: None, background: bool
) -> None:
    """The lease of a new run is renewed while it works, as a resume's is: a first run that
    outlasts lease_ttl still checkpoints its pause (foreground and background alike)."""
    async with embedded_lgos(tmp_path, lease_ttl=0.5) as client:
        body: dict[str, Any] = {
            "model": "slow-before-interrupt",
            "input": "go",
            "metadata": slow(1.5),
        }
        response = await client.responses.create(**body, background=background)
        for _ in range(100):
            if response.status not in ("queued", "in_progress"):
                break
            await asyncio.sleep(0.1)
            response = await client.responses.retrieve(response.id)
        assert response.status == "completed", response.error
        [call] = response.output
        assert call.type == "function_call" and call.name == "lgos_interrupt"
        resumed = await client.responses.create(
            model="slow-before-interrupt",
            previous_response_id=response.id,
            input=[answer(call, "yes")],
            metadata=slow(0),
        )
        assert resumed.output_text == "approved: yes"
