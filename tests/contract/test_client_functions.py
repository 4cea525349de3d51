"""Client functions: the SDK function-call round trip on simple-graph, and replay validation."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.advanced import CALCULATE_SUM

CHAT_CALCULATE_SUM = {
    "type": "function",
    "function": {k: v for k, v in CALCULATE_SUM.items() if k != "type"},
}


async def test_calculate_sum_round_trip(client: AsyncOpenAI) -> None:
    """The seed example: forced call, client executes it, the graph answers from the output."""
    ledger: list[Any] = [{"role": "user", "content": "Add 12, 30, and 5."}]
    called = await client.responses.create(
        model="simple-graph",
        input=ledger,
        tools=[CALCULATE_SUM],
        store=False,
        tool_choice={"type": "function", "name": "calculate_sum"},
    )
    assert called.status == "completed"
    [call] = [item for item in called.output if item.type == "function_call"]
    assert [item.type for item in called.output] == ["function_call"]
    assert call.name == "calculate_sum"
    assert call.status == "completed"
    arguments = json.loads(call.arguments)
    assert arguments == {"numbers": [12, 30, 5]}
    assert called.tool_choice.name == "calculate_sum"

    ledger.extend(called.output)
    ledger.append(
        {
            "type": "function_call_output",
            "call_id": call.call_id,
            "output": json.dumps({"total": sum(arguments["numbers"])}),
        }
    )
    completed = await client.responses.create(
        model="simple-graph", input=ledger, tools=[CALCULATE_SUM], store=False
    )
    assert completed.status == "completed"
    assert 'Tool outputs: "{"total": 47}"' in completed.output_text
    assert [item.type for item in completed.output] == ["message"]


async def test_streamed_function_call_events(client: AsyncOpenAI) -> None:
    stream = await client.responses.create(
        model="simple-graph",
        input="Please calculate sum of 2 and 3",
        tools=[CALCULATE_SUM],
        stream=True,
    )
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    assert kinds == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    added, delta, done, item_done = events[2:6]
    assert added.item.type == "function_call" and added.item.arguments == ""
    assert added.item.status == "in_progress"
    assert delta.delta == done.arguments == item_done.item.arguments
    assert json.loads(done.arguments) == {"numbers": [2, 3]}
    assert {added.item.id, delta.item_id, done.item_id, item_done.item.id} == {added.item.id}
    assert events[-1].response.output[0].call_id == added.item.call_id


async def test_no_tool_named_means_an_ordinary_answer(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="simple-graph", input="Just talk to me.", tools=[CALCULATE_SUM]
    )
    assert [item.type for item in response.output] == ["message"]


async def test_chat_tool_round_trip(client: AsyncOpenAI) -> None:
    messages: list[Any] = [{"role": "user", "content": "Add 1, 2 and 3."}]
    first = await client.chat.completions.create(
        model="simple-graph",
        messages=messages,
        tools=[CHAT_CALCULATE_SUM],
        tool_choice={"type": "function", "function": {"name": "calculate_sum"}},
    )
    choice = first.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content is None
    [call] = choice.message.tool_calls or []
    assert call.function.name == "calculate_sum"
    assert json.loads(call.function.arguments) == {"numbers": [1, 2, 3]}
    messages.append(choice.message.model_dump(exclude_none=True))
    messages.append({"role": "tool", "tool_call_id": call.id, "content": '{"total": 6}'})
    second = await client.chat.completions.create(
        model="simple-graph", messages=messages, tools=[CHAT_CALCULATE_SUM]
    )
    assert second.choices[0].finish_reason == "stop"
    assert 'Tool outputs: "{"total": 6}"' in (second.choices[0].message.content or "")


async def test_chat_streamed_tool_call(client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="simple-graph",
        messages=[{"role": "user", "content": "calculate sum 4 5"}],
        tools=[CHAT_CALCULATE_SUM],
        stream=True,
    )
    chunks = [c async for c in stream]
    calls = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    assert len(calls) == 1
    assert calls[0].function is not None
    assert calls[0].function.name == "calculate_sum"
    assert json.loads(calls[0].function.arguments or "") == {"numbers": [4, 5]}
    assert chunks[-1].choices[0].finish_reason == "tool_calls"


def exchange(call_id: str = "call_1", output_id: str | None = None) -> list[Any]:
    return [
        {"role": "user", "content": "q"},
        {
            "type": "function_call",
            "call_id": call_id,
            "name": "calculate_sum",
            "arguments": '{"numbers": [1]}',
        },
        {"type": "function_call_output", "call_id": output_id or call_id, "output": "1"},
    ]


PAIRING_ERRORS: list[tuple[list[Any], str, str]] = [
    (exchange()[:2], "input[1].call_id", "missing_tool_output"),
    (exchange(output_id="call_other"), "input[2].call_id", "unmatched_tool_output"),
    (
        [*exchange(), {"type": "function_call_output", "call_id": "call_1", "output": "2"}],
        "input[3].call_id",
        "duplicate_tool_output",
    ),
    (
        [*exchange()[:2], {"type": "custom_tool_call_output", "call_id": "call_1", "output": "1"}],
        "input[2].call_id",
        "mismatched_tool_output",
    ),
    ([*exchange()[:2], exchange()[1], exchange()[2]], "input[2].call_id", "duplicate_call_id"),
]


@pytest.mark.parametrize(("items", "param", "code"), PAIRING_ERRORS)
@pytest.mark.parametrize("stream", [False, True])
async def test_replay_pairing_is_validated_before_the_graph_runs(
    client: AsyncOpenAI, items: list[Any], param: str, code: str, stream: bool
) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="simple-graph", input=items, tools=[CALCULATE_SUM], stream=stream
        )
    assert caught.value.param == param
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("extra", "param"),
    [
        ({"caller": {"type": "direct"}}, "input[1].caller"),
        ({"namespace": "tools"}, "input[1].namespace"),
        ({"async_": True}, "input[1].async_"),
    ],
)
async def test_sdk_null_fields(client: AsyncOpenAI, extra: dict[str, Any], param: str) -> None:
    items = exchange()
    items[1] = {**items[1], "caller": None, "namespace": None, "async_": None}
    ok = await client.responses.create(model="simple-graph", input=items, tools=[CALCULATE_SUM])
    assert ok.status == "completed"
    items[1] = {**items[1], **extra}
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="simple-graph", input=items, tools=[CALCULATE_SUM])
    assert caught.value.param == param


async def test_non_string_function_output_is_rejected(client: AsyncOpenAI) -> None:
    items = exchange()
    items[2] = {**items[2], "output": [{"type": "input_text", "text": "1"}]}
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="simple-graph", input=items)
    assert caught.value.param == "input[2].output"


async def test_chat_pairing(client: AsyncOpenAI) -> None:
    call = {
        "id": "call_9",
        "type": "function",
        "function": {"name": "calculate_sum", "arguments": '{"numbers": [1]}'},
    }
    with pytest.raises(openai.BadRequestError) as missing:
        await client.chat.completions.create(
            model="simple-graph",
            messages=[
                {"role": "user", "content": "q"},
                {"role": "assistant", "content": None, "tool_calls": [call]},
            ],
        )
    assert missing.value.code == "missing_tool_output"
    with pytest.raises(openai.BadRequestError) as unmatched:
        await client.chat.completions.create(
            model="simple-graph",
            messages=[
                {"role": "user", "content": "q"},
                {"role": "tool", "tool_call_id": "call_x", "content": "1"},
            ],
        )
    assert unmatched.value.param == "messages[1].tool_call_id"


async def test_replayed_calls_reach_the_graph_as_langchain_tool_calls(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="echo-request", input=exchange())
    report = json.loads(response.output_text)
    ai, tool = report["messages"][1], report["messages"][2]
    assert ai["type"] == "ai"
    assert ai["content"][0]["type"] == "function_call"
    assert ai["content"][0]["call_id"] == "call_1"
    assert tool == {"type": "tool", "content": "1", "id": None, "phase": None, "status": None}


async def test_truncated_arguments_stay_raw_on_an_incomplete_item(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="truncated-call", input="x", tools=[CALCULATE_SUM]
    )
    assert response.status == "incomplete"
    [call] = response.output
    assert call.type == "function_call"
    assert call.status == "incomplete"
    assert call.arguments == '{"numbers": [1, 2'
    stream = await client.responses.create(
        model="truncated-call", input="x", tools=[CALCULATE_SUM], stream=True
    )
    events = [e async for e in stream]
    assert events[-1].type == "response.incomplete"
    done = next(e for e in events if e.type == "response.output_item.done")
    assert done.item.status == "incomplete"
    assert done.item.arguments == '{"numbers": [1, 2'
