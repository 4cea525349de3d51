"""POST /v1/chat/completions: the strict standard subset through the official SDK."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from lgos.protocol.chat.decode import UNSUPPORTED_FIELDS
from openai import AsyncOpenAI

from tests.support.envelopes import assert_rejected_field
from tests.support.graphs import SCRIPTED_TEXT, SECRET
from tests.support.metadata import lgos_settings


def user(text: str) -> list[Any]:
    return [{"role": "user", "content": text}]


async def test_completion(client: AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="simple-graph", messages=user("Hi chat")
    )
    assert completion.object == "chat.completion"
    assert completion.id.startswith("chatcmpl-")
    [choice] = completion.choices
    assert choice.finish_reason == "stop"
    assert choice.message.role == "assistant"
    assert 'You said: "Hi chat"' in choice.message.content
    assert completion.usage is not None and completion.usage.total_tokens > 0


async def test_stream_is_plain_content_deltas(client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="status-events", messages=user("Stream chat"), stream=True
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[0].choices[0].delta.role == "assistant"
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert 'You said: "Stream chat"' in text
    assert "Reading the question" not in text  # statuses are Responses-only
    assert chunks[-1].choices[0].finish_reason == "stop"
    assert all(c.usage is None for c in chunks)
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) > 5
    non_streamed = await client.chat.completions.create(
        model="status-events", messages=user("Stream chat")
    )
    assert text == non_streamed.choices[0].message.content


async def test_stream_include_usage_adds_final_usage_chunk(client: AsyncOpenAI) -> None:
    stream = await client.chat.completions.create(
        model="scripted",
        messages=user("x"),
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = [chunk async for chunk in stream]
    assert chunks[-1].choices == []
    assert chunks[-1].usage is not None
    assert (chunks[-1].usage.prompt_tokens, chunks[-1].usage.completion_tokens) == (3, 5)
    assert chunks[-2].choices[0].finish_reason == "stop"
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == SCRIPTED_TEXT


async def test_usage_absent_when_not_reported(client: AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(model="no-usage", messages=user("x"))
    assert completion.usage is None
    stream = await client.chat.completions.create(
        model="no-usage", messages=user("x"), stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]
    assert all(c.usage is None for c in chunks)


async def test_settings_and_file_parts(client: AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="simple-graph",
        messages=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Summarize"},
                    {"type": "file", "file": {"file_id": "file-123"}},
                ],
            }
        ],
        metadata=lgos_settings(audience="beginner"),
    )
    content = completion.choices[0].message.content or ""
    assert "beginner audience" in content
    assert "Files: file-123." in content


async def test_replayed_assistant_with_null_function_call(client: AsyncOpenAI) -> None:
    first = await client.chat.completions.create(model="scripted", messages=user("one"))
    replay = [
        *user("one"),
        first.choices[0].message.model_dump(),  # carries function_call: None and friends
        *user("two"),
    ]
    completion = await client.chat.completions.create(model="echo-request", messages=replay)
    report = json.loads(completion.choices[0].message.content or "")
    assert [m["type"] for m in report["messages"]] == ["human", "ai", "human"]
    assert report["protocol"] == "chat"


CHAT_REJECTIONS: list[tuple[dict[str, Any], str]] = [
    ({"temperature": 0.5}, "temperature"),
    ({"max_tokens": 5}, "max_tokens"),
    ({"max_completion_tokens": 5}, "max_completion_tokens"),
    ({"n": 2}, "n"),
    ({"response_format": {"type": "json_object"}}, "response_format"),
    ({"functions": [{"name": "f", "parameters": {}}]}, "functions"),
    ({"function_call": "auto"}, "function_call"),
    ({"extra_body": {"surprise": True}}, "surprise"),
    ({"messages": [{"role": "function", "name": "f", "content": "x"}]}, "messages[0].role"),
    (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "image_url", "image_url": {"url": "https://example.invalid/a.png"}}
                    ],
                }
            ]
        },
        "messages[0].content[0].type",
    ),
    (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "input_audio", "input_audio": {"data": "AAAA", "format": "wav"}}
                    ],
                }
            ]
        },
        "messages[0].content[0].type",
    ),
    (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "file", "file": {"file_data": "data:application/pdf;base64,AAAA"}}
                    ],
                }
            ]
        },
        "messages[0].content[0].file.file_data",
    ),
    (
        {
            "messages": [
                {
                    "role": "user",
                    "content": [{"type": "file", "file": {"file_id": "f", "filename": "a.pdf"}}],
                }
            ]
        },
        "messages[0].content[0].file.filename",
    ),
    (
        {
            "messages": [
                {
                    "role": "assistant",
                    "content": "x",
                    "function_call": {"name": "f", "arguments": "{}"},
                }
            ]
        },
        "messages[0].function_call",
    ),
    ({"tools": [{"type": "custom", "custom": {"name": "x"}}]}, "tools[0].type"),
    ({"stream_options": {"include_usage": True}}, "stream_options"),
]


@pytest.mark.parametrize(("extra", "param"), CHAT_REJECTIONS)
async def test_rejections(client: AsyncOpenAI, extra: dict[str, Any], param: str) -> None:
    kwargs: dict[str, Any] = {"model": "scripted", "messages": user("x"), **extra}
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(**kwargs)
    assert_rejected_field(caught.value, param, param, UNSUPPORTED_FIELDS)


async def test_interrupt_enabled_models_are_rejected(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.chat.completions.create(model="interrupts", messages=user("x"))
    assert caught.value.param == "model"
    assert "Responses API" in caught.value.message


async def test_unknown_model_is_404(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.chat.completions.create(model="missing", messages=user("x"))
    assert caught.value.code == "model_not_found"


async def test_refusal_and_incomplete(client: AsyncOpenAI) -> None:
    refusal = await client.chat.completions.create(
        model="response-outcomes",
        messages=user("x"),
        metadata=lgos_settings(outcome="refusal"),
    )
    assert refusal.choices[0].message.refusal == "I can't help with that request."
    assert refusal.choices[0].message.content is None
    incomplete = await client.chat.completions.create(
        model="response-outcomes",
        messages=user("x"),
        metadata=lgos_settings(outcome="incomplete"),
    )
    assert incomplete.choices[0].finish_reason == "length"
    stream = await client.chat.completions.create(
        model="response-outcomes",
        messages=user("x"),
        stream=True,
        metadata=lgos_settings(outcome="refusal"),
    )
    chunks = [chunk async for chunk in stream]
    assert "".join(c.choices[0].delta.refusal or "" for c in chunks if c.choices) == (
        "I can't help with that request."
    )


async def test_failures(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        await client.chat.completions.create(model="broken", messages=user("x"))
    assert caught.value.body["message"] == "Internal server error"
    assert SECRET not in caught.value.response.text
    with pytest.raises(openai.BadRequestError) as overflow:
        await client.chat.completions.create(model="context-overflow", messages=user("x"))
    assert overflow.value.code == "context_length_exceeded"
    stream = await client.chat.completions.create(
        model="broken-midway", messages=user("x"), stream=True
    )
    received: list[str] = []
    with pytest.raises(openai.APIError) as streamed:
        async for chunk in stream:
            received.append(chunk.choices[0].delta.content or "")
    assert "".join(received) == "A partial answer before the failure"
    assert "Internal server error" in str(streamed.value)
