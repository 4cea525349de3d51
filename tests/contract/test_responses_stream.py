"""Streaming Responses: the typed event lifecycle, parity, commentary and terminal outcomes."""

from __future__ import annotations

import json
from typing import Any

import pytest
from openai import AsyncOpenAI

from tests.support.graphs import PRIVATE_TEXT, SCRIPTED_TEXT, SECRET
from tests.support.metadata import lgos_settings


async def collect(client: AsyncOpenAI, **kwargs: Any) -> list[Any]:
    stream = await client.responses.create(stream=True, **kwargs)
    return [event async for event in stream]


def types(events: list[Any]) -> list[str]:
    return [e.type for e in events]


def assert_sequence_numbers(events: list[Any]) -> None:
    assert [e.sequence_number for e in events] == list(range(len(events)))


def deltas(events: list[Any], item_id: str | None = None) -> str:
    return "".join(
        e.delta
        for e in events
        if e.type == "response.output_text.delta" and (item_id is None or e.item_id == item_id)
    )


async def test_text_stream_lifecycle(client: AsyncOpenAI) -> None:
    events = await collect(client, model="simple-graph", input="Stream me")
    kinds = types(events)
    assert kinds[:5] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]
    assert kinds[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert set(kinds[4:-4]) == {"response.output_text.delta"}
    assert kinds.count("response.output_text.delta") > 5  # really streamed, token by token
    assert_sequence_numbers(events)
    created, completed = events[0].response, events[-1].response
    assert created.status == "in_progress" and created.output == []
    assert completed.id == created.id and completed.status == "completed"
    item_id = events[2].item.id
    assert {e.item_id for e in events if hasattr(e, "item_id")} == {item_id}
    assert {e.output_index for e in events if hasattr(e, "output_index")} == {0}
    text = completed.output_text
    assert deltas(events) == text == events[-4].text
    assert 'You said: "Stream me"' in text
    assert completed.output[0].phase == "final_answer"
    assert completed.usage is not None and completed.usage.output_tokens > 0


async def test_statuses_become_completed_commentary_messages(client: AsyncOpenAI) -> None:
    events = await collect(client, model="status-events", input="q")
    done_items = [e.item for e in events if e.type == "response.output_item.done"]
    assert [(i.phase, i.status) for i in done_items] == [
        ("commentary", "completed"),
        ("commentary", "completed"),
        ("final_answer", "completed"),
    ]
    assert [i.content[0].text for i in done_items[:2]] == [
        "Reading the question",
        "Drafting the answer",
    ]
    final = events[-1].response
    assert [o.phase for o in final.output] == ["commentary", "commentary", "final_answer"]
    answer_id = done_items[2].id
    assert deltas(events, answer_id) == final.output[2].content[0].text
    assert_sequence_numbers(events)


async def test_non_streaming_has_no_commentary(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="status-events", input="q")
    assert [o.phase for o in response.output] == ["final_answer"]


async def test_private_custom_data_never_reaches_the_stream(client: AsyncOpenAI) -> None:
    events = await collect(client, model="custom-data", input="q")
    dumped = json.dumps([e.model_dump() for e in events])
    assert SECRET not in dumped
    assert "Working on it" in dumped
    assert events[-1].type == "response.completed"


async def test_nostream_model_calls_stay_private(client: AsyncOpenAI) -> None:
    events = await collect(client, model="private-then-answer", input="q")
    dumped = json.dumps([e.model_dump() for e in events])
    assert PRIVATE_TEXT not in dumped
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == SCRIPTED_TEXT == deltas(events)
    usage = events[-1].response.usage
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (4, 7, 11)


async def test_final_text_is_emitted_when_nothing_streamed(client: AsyncOpenAI) -> None:
    events = await collect(client, model="unstreamed", input="q")
    expected = "An answer assembled without any streamed message."
    assert deltas(events) == expected
    assert events[-1].type == "response.completed"
    assert events[-1].response.output_text == expected


async def test_parity_mismatch_fails_and_keeps_the_partial_answer(client: AsyncOpenAI) -> None:
    events = await collect(client, model="parity-mismatch", input="q")
    assert events[-1].type == "response.failed"
    failed = events[-1].response
    assert failed.status == "failed"
    assert failed.error is not None and failed.error.code == "server_error"
    assert failed.error.message == "Internal server error"
    [item] = failed.output
    assert item.status == "incomplete"
    assert item.content[0].text == "streamed words that differ" == deltas(events)
    assert "response.completed" not in types(events)


async def test_graph_failure_mid_stream_keeps_partial_answer(client: AsyncOpenAI) -> None:
    events = await collect(client, model="broken-midway", input="q")
    kinds = types(events)
    assert kinds[-1] == "response.failed"
    assert kinds[-2] == "response.output_item.done"
    partial = "A partial answer before the failure"
    assert deltas(events) == partial
    assert events[-2].item.status == "incomplete"
    assert events[-1].response.output[0].content[0].text == partial
    assert SECRET not in json.dumps([e.model_dump() for e in events])
    assert_sequence_numbers(events)


async def test_failure_before_any_text(client: AsyncOpenAI) -> None:
    events = await collect(client, model="broken", input="q")
    assert types(events) == ["response.created", "response.in_progress", "response.failed"]
    assert events[-1].response.output == []


async def test_context_overflow_in_a_stream_is_a_server_error(client: AsyncOpenAI) -> None:
    events = await collect(client, model="context-overflow", input="q")
    assert events[-1].type == "response.failed"
    assert events[-1].response.error.code == "server_error"


async def test_refusal_stream(client: AsyncOpenAI) -> None:
    events = await collect(
        client, model="response-outcomes", input="q", metadata=lgos_settings(outcome="refusal")
    )
    kinds = types(events)
    assert "response.refusal.delta" in kinds and "response.refusal.done" in kinds
    assert "response.output_text.delta" not in kinds
    final = events[-1]
    assert final.type == "response.completed"
    [part] = final.response.output[0].content
    assert part.type == "refusal" and part.refusal == "I can't help with that request."
    assert_sequence_numbers(events)


async def test_incomplete_stream_ends_with_response_incomplete(client: AsyncOpenAI) -> None:
    events = await collect(
        client, model="response-outcomes", input="q", metadata=lgos_settings(outcome="incomplete")
    )
    final = events[-1]
    assert final.type == "response.incomplete"
    assert final.response.status == "incomplete"
    assert final.response.incomplete_details.reason == "max_output_tokens"
    assert final.response.output[0].status == "incomplete"
    assert final.response.usage is not None
    assert deltas(events) == final.response.output_text


async def test_usage_absent_in_stream_when_not_reported(client: AsyncOpenAI) -> None:
    events = await collect(client, model="no-usage", input="q")
    assert events[-1].type == "response.completed"
    assert events[-1].response.usage is None
    assert deltas(events) == SCRIPTED_TEXT


async def test_stream_rejections_happen_before_the_stream(client: AsyncOpenAI) -> None:
    import openai

    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="scripted", input="x", stream=True, temperature=0.1)
    assert caught.value.param == "temperature"
