"""offline-model through the strict official SDK: Responses and Chat, streaming and not, usage."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from offline_model.answer import LABEL
from openai import AsyncOpenAI

from tests.support.clients import sdk_client
from tests.support.servers import Server


@pytest.fixture
async def model(offline_model: Server) -> AsyncIterator[AsyncOpenAI]:
    async with sdk_client(f"{offline_model.url}/v1") as client:
        yield client


async def test_lists_itself_as_a_stand_in(model: AsyncOpenAI) -> None:
    [entry] = (await model.models.list()).data
    assert entry.id == "offline-model"
    assert "deterministic stand-in" in entry.owned_by


async def test_chat_answer_is_derived_from_the_input(model: AsyncOpenAI) -> None:
    messages = [
        {"role": "system", "content": "Be terse."},
        {"role": "user", "content": "first"},
        {"role": "assistant", "content": "ok"},
        {"role": "user", "content": "What is 2+2?"},
    ]
    completion = await model.chat.completions.create(model="offline-model", messages=messages)
    text = completion.choices[0].message.content or ""
    assert text.startswith(LABEL)
    assert 'You said: "What is 2+2?"' in text
    assert 'Instructions: "Be terse."' in text
    assert "Earlier messages: 2." in text
    again = await model.chat.completions.create(model="offline-model", messages=messages)
    assert again.choices[0].message.content == text
    assert completion.usage is not None
    assert completion.usage.completion_tokens == len(text.split())


async def test_chat_stream_and_usage_only_when_asked(model: AsyncOpenAI) -> None:
    messages = [{"role": "user", "content": "stream please"}]
    plain = await model.chat.completions.create(model="offline-model", messages=messages)
    stream = await model.chat.completions.create(
        model="offline-model", messages=messages, stream=True
    )
    chunks = [c async for c in stream]
    assert all(c.usage is None for c in chunks)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == plain.choices[0].message.content
    with_usage = await model.chat.completions.create(
        model="offline-model",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
    )
    last = [c async for c in with_usage][-1]
    assert last.choices == []
    assert last.usage is not None
    assert last.usage.completion_tokens == len(text.split())


async def test_chat_token_cap_reports_length(model: AsyncOpenAI) -> None:
    completion = await model.chat.completions.create(
        model="offline-model", messages=[{"role": "user", "content": "long"}], max_tokens=3
    )
    assert completion.choices[0].finish_reason == "length"
    assert len((completion.choices[0].message.content or "").split()) == 3


async def test_responses_non_streaming_and_streaming(model: AsyncOpenAI) -> None:
    response = await model.responses.create(
        model="offline-model", instructions="Answer kindly.", input="Responses path?"
    )
    assert response.status == "completed"
    assert 'You said: "Responses path?"' in response.output_text
    assert 'Instructions: "Answer kindly."' in response.output_text
    assert response.usage is not None
    assert response.usage.output_tokens == len(response.output_text.split())
    stream = await model.responses.create(
        model="offline-model", instructions="Answer kindly.", input="Responses path?", stream=True
    )
    events = [e async for e in stream]
    assert events[-1].type == "response.completed"
    deltas = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert deltas == response.output_text == events[-1].response.output_text
    assert [e.sequence_number for e in events] == list(range(len(events)))


TOOL_EXCHANGE = [
    {"role": "user", "content": "use the tool"},
    {"type": "function_call", "call_id": "c1", "name": "lookup", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "42 apples"},
]


async def test_responses_tool_outputs_and_cap(model: AsyncOpenAI) -> None:
    response = await model.responses.create(
        model="offline-model", input=TOOL_EXCHANGE, max_output_tokens=4
    )
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    full = await model.responses.create(model="offline-model", input=TOOL_EXCHANGE)
    assert 'Tool outputs: "42 apples"' in full.output_text


SUM_FUNCTION = {
    "type": "function",
    "name": "calculate_sum",
    "parameters": {
        "type": "object",
        "properties": {"numbers": {"type": "array", "items": {"type": "integer"}}},
    },
}


async def test_chat_calls_a_forced_tool_with_arguments_from_the_request(
    model: AsyncOpenAI,
) -> None:
    tool = {"type": "function", "function": {k: v for k, v in SUM_FUNCTION.items() if k != "type"}}
    completion = await model.chat.completions.create(
        model="offline-model",
        messages=[{"role": "user", "content": "Add 1, 2 and 40"}],
        tools=[tool],
        tool_choice="required",
    )
    [call] = completion.choices[0].message.tool_calls or []
    assert completion.choices[0].finish_reason == "tool_calls"
    assert call.function.arguments == '{"numbers":[1,2,40]}'


async def test_responses_calls_a_named_custom_tool_when_streaming(model: AsyncOpenAI) -> None:
    stream = await model.responses.create(
        model="offline-model",
        input="What package version is installed?",
        tools=[{"type": "custom", "name": "package_version"}, SUM_FUNCTION],
        stream=True,
    )
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    assert "response.custom_tool_call_input.delta" in kinds
    assert "response.function_call_arguments.delta" not in kinds  # not named, not forced
    [call] = events[-1].response.output
    assert call.type == "custom_tool_call"
    assert call.input == "What package version is installed?"


async def test_no_tool_is_called_after_a_tool_result(model: AsyncOpenAI) -> None:
    response = await model.responses.create(
        model="offline-model",
        tools=[SUM_FUNCTION],
        tool_choice="required",
        input=[
            {"role": "user", "content": "calculate sum 1 2"},
            {
                "type": "function_call",
                "call_id": "c1",
                "name": "calculate_sum",
                "arguments": '{"numbers": [1, 2]}',
            },
            {"type": "function_call_output", "call_id": "c1", "output": "3"},
        ],
    )
    assert [item.type for item in response.output] == ["message"]
    assert 'Tool outputs: "3"' in response.output_text


async def test_responses_structured_output_fits_the_json_schema(model: AsyncOpenAI) -> None:
    import json

    schema = {
        "type": "object",
        "properties": {
            "intent": {"type": "string", "enum": ["chat", "research", "save", "research_and_save"]}
        },
        "required": ["intent"],
        "additionalProperties": False,
    }
    text_format: object = {
        "format": {
            "type": "json_schema",
            "name": "classification",
            "schema": schema,
            "strict": True,
        }
    }
    for prompt, intent in (("Search for retries.", "research"), ("Hi!", "chat")):
        response = await model.responses.create(
            model="offline-model",
            input=prompt,
            text=text_format,  # type: ignore[arg-type]
        )
        assert json.loads(response.output_text) == {"intent": intent}
        assert response.text is not None and response.text.format.type == "json_schema"
    stream = await model.responses.create(
        model="offline-model",
        input="Remember this: x and search for y.",
        text=text_format,  # type: ignore[arg-type]
        stream=True,
    )
    events = [event async for event in stream]
    assert json.loads(events[-1].response.output_text) == {"intent": "research_and_save"}
