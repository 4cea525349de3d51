"""POST /v1/responses, non-streaming: the text subset, settings, metadata and rejections."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from lgos.protocol.responses.decode import UNSUPPORTED_FIELDS
from openai import AsyncOpenAI

from tests.support.envelopes import assert_rejected_field, server_error
from tests.support.graphs import SCRIPTED_TEXT, SECRET
from tests.support.metadata import lgos_settings


async def echo(client: AsyncOpenAI, **kwargs: Any) -> dict[str, Any]:
    kwargs.setdefault("input", "hello")
    response = await client.responses.create(model="echo-request", **kwargs)
    return dict(json.loads(response.output_text))


async def test_string_input_reaches_the_model_and_comes_back(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="simple-graph", input="What is LangGraph?")
    assert response.status == "completed"
    assert response.id.startswith("resp_")
    assert response.model == "simple-graph"
    [item] = response.output
    assert item.type == "message" and item.role == "assistant" and item.status == "completed"
    assert item.phase == "final_answer"
    assert "offline-model" in response.output_text
    assert 'You said: "What is LangGraph?"' in response.output_text
    assert "general audience" in response.output_text
    assert response.usage is not None and response.usage.total_tokens > 0
    assert response.usage.total_tokens == response.usage.input_tokens + response.usage.output_tokens


async def test_instructions_and_item_input(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="status-events",
        instructions="Be brief.",
        input=[{"role": "user", "content": [{"type": "input_text", "text": "Item input"}]}],
    )
    assert 'You said: "Item input"' in response.output_text
    assert 'Instructions: "Be brief."' in response.output_text


async def test_settings_change_the_answer(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="simple-graph", input="Explain graphs", metadata=lgos_settings(audience="expert")
    )
    assert "expert audience" in response.output_text


async def test_use_history_setting_controls_what_the_model_sees(client: AsyncOpenAI) -> None:
    history: list[Any] = [
        {"role": "user", "content": "first question"},
        {"role": "assistant", "content": "first answer"},
        {"role": "user", "content": "second question"},
    ]
    without = await client.responses.create(model="simple-graph", input=history)
    assert "Earlier messages" not in without.output_text
    with_history = await client.responses.create(
        model="simple-graph", input=history, metadata=lgos_settings(use_history=True)
    )
    assert "Earlier messages: 2." in with_history.output_text


async def test_settings_merge_shallowly_over_defaults(client: AsyncOpenAI) -> None:
    report = await echo(client, metadata=lgos_settings(nested={"c": 3}))
    assert report["settings"] == {"flag": False, "nested": {"c": 3}}
    assert (await echo(client))["settings"] == {"flag": False, "nested": {"a": 1, "b": 2}}


@pytest.mark.parametrize(
    "raw",
    [
        json.dumps({"audience": "toddler"}),
        json.dumps({"unknown_setting": 1}),
        "not json",
        json.dumps(["a list"]),
    ],
)
async def test_invalid_settings_are_rejected(client: AsyncOpenAI, raw: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="simple-graph", input="x", metadata={"lgos_settings": raw}
        )
    assert caught.value.param == "metadata.lgos_settings"
    assert caught.value.body["type"] == "invalid_request_error"


async def test_metadata_passes_through_and_conversation_id_is_read(client: AsyncOpenAI) -> None:
    report = await echo(
        client, metadata={"conversation_id": "conv-42", "app_key": "v", **lgos_settings(flag=True)}
    )
    assert report["conversation_id"] == "conv-42"
    assert report["metadata"] == {"conversation_id": "conv-42", "app_key": "v"}
    assert report["settings"]["flag"] is True


@pytest.mark.parametrize(
    ("metadata", "param"),
    [
        ({f"k{i}": "v" for i in range(17)}, "metadata"),
        ({"k" * 65: "v"}, "metadata"),
        ({"key": "v" * 513}, "metadata.key"),
        ({"lgos_other": "v"}, "metadata.lgos_other"),
    ],
)
async def test_metadata_limits(client: AsyncOpenAI, metadata: dict[str, str], param: str) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="echo-request", input="x", metadata=metadata)
    assert caught.value.param == param


async def test_metadata_at_the_limits_is_accepted(client: AsyncOpenAI) -> None:
    metadata = {f"{i:02d}" + "k" * 62: "v" * 512 for i in range(16)}
    report = await echo(client, metadata=metadata)
    assert report["metadata"] == metadata


async def test_response_echoes_request_fields(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="scripted", input="x", instructions="Be kind.", metadata={"a": "b"}, store=False
    )
    assert response.instructions == "Be kind."
    assert response.metadata == {"a": "b"}
    assert response.tools == [] and response.tool_choice == "auto"
    assert response.output_text == SCRIPTED_TEXT


async def test_replayed_assistant_items_keep_id_and_phase(client: AsyncOpenAI) -> None:
    first = await client.responses.create(model="scripted", input="first")
    replay: list[Any] = [{"role": "user", "content": "first"}]
    replay += [item.model_dump(exclude_none=True) for item in first.output]
    replay.append({"role": "user", "content": "second"})
    report = await echo(client, input=replay)
    assistant = report["messages"][1]
    assert assistant["type"] == "ai"
    assert assistant["id"] == first.output[0].id
    assert assistant["phase"] == "final_answer"
    assert assistant["status"] == "completed"
    assert assistant["content"] == [{"type": "text", "text": SCRIPTED_TEXT}]
    assert report["messages"][2]["content"] == "second"


async def test_replayed_refusal_and_sdk_null_fields(client: AsyncOpenAI) -> None:
    refusal_item = {
        "type": "message",
        "role": "assistant",
        "id": "msg_1",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": "partial", "annotations": [], "parsed": None},
            {"type": "refusal", "refusal": "no"},
        ],
    }
    report = await echo(client, input=[{"role": "user", "content": "q"}, refusal_item])
    assert report["messages"][1]["content"] == [
        {"type": "text", "text": "partial"},
        {"type": "refusal", "refusal": "no"},
    ]


async def test_file_ids_normalize_to_langchain_file_blocks(client: AsyncOpenAI) -> None:
    text = {"type": "input_text", "text": "read this"}
    content = [text, {"type": "input_file", "file_id": "file-abc"}]
    report = await echo(client, input=[{"role": "user", "content": content}])
    assert report["messages"][0]["content"] == [
        {"type": "text", "text": "read this"},
        {"type": "file", "file_id": "file-abc"},
    ]


async def test_tools_are_normalized_for_the_graph(client: AsyncOpenAI) -> None:
    report = await echo(
        client,
        tools=[
            {"type": "function", "name": "display_file", "parameters": {"type": "object"}},
            {"type": "custom", "name": "package_version"},
        ],
        tool_choice={"type": "function", "name": "display_file"},
    )
    assert report["tools"][0]["name"] == "display_file"
    assert report["tool_choice"] == {"type": "function", "name": "display_file"}


REJECTIONS: list[tuple[dict[str, Any], str]] = [
    ({"temperature": 0.2}, "temperature"),
    ({"top_p": 0.5}, "top_p"),
    ({"max_output_tokens": 10}, "max_output_tokens"),
    ({"reasoning": {"effort": "low"}}, "reasoning"),
    ({"include": ["message.output_text.logprobs"]}, "include"),
    ({"include": ["reasoning.encrypted_content", "web_search_call.results"]}, "include"),
    ({"metadata": {"lgos_settings": '{"flag": "yes"}'}}, "metadata.lgos_settings"),
    ({"metadata": {"lgos_settings": '{"flag": 1}'}}, "metadata.lgos_settings"),
    ({"metadata": {"lgos_settings": '{"nested": {"a": "1"}}'}}, "metadata.lgos_settings"),
    ({"conversation": "conv_1"}, "conversation"),
    ({"text": {"format": {"type": "json_object"}}}, "text.format"),
    ({"tools": [{"type": "file_search", "vector_store_ids": ["vs"]}]}, "tools[0].type"),
    ({"tools": [{"type": "web_search"}], "tool_choice": {"type": "web_search"}}, "tool_choice"),
    ({"tools": [{"type": "custom", "name": "unregistered"}]}, "tools[0].name"),
    ({"tools": [{"type": "custom", "name": "package_version", "description": "x"}]}, "tools[0]"),
    ({"tools": [{"type": "function", "name": "package_version"}]}, "tools[0].name"),
    ({"store": True}, "store"),
    ({"previous_response_id": "resp_123"}, "previous_response_id"),
    ({"background": True}, "background"),
    ({"extra_body": {"surprise": 1}}, "surprise"),
    (
        {"input": [{"role": "user", "content": [{"type": "input_image", "image_url": "x"}]}]},
        "input[0].content[0].type",
    ),
    (
        {"input": [{"role": "user", "content": [{"type": "input_file", "file_data": "abc"}]}]},
        "input[0].content[0].file_data",
    ),
    ({"input": [{"role": "wizard", "content": "x"}]}, "input[0].role"),
    # Found by the decoder property: unhashable values once reached a set or dict lookup (500).
    ({"input": [{"type": [], "role": "user", "content": "x"}]}, "input[0].type"),
    ({"input": [{"type": {"a": 1}}]}, "input[0].type"),
    ({"input": [{"role": ["user"], "content": "x"}]}, "input[0].role"),
    ({"input": [{"type": "reasoning", "summary": []}]}, "input[0].type"),
    (
        {
            "input": [
                {
                    "type": "message",
                    "role": "assistant",
                    "content": [
                        {"type": "output_text", "text": "{}", "annotations": [], "parsed": {"a": 1}}
                    ],
                }
            ]
        },
        "input[0].content[0].parsed",
    ),
]


@pytest.mark.parametrize(("extra", "param"), REJECTIONS)
async def test_unsupported_fields_are_rejected_with_their_param(
    client: AsyncOpenAI, extra: dict[str, Any], param: str
) -> None:
    kwargs: dict[str, Any] = {"model": "echo-request", "input": "x", **extra}
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(**kwargs)
    assert caught.value.status_code == 400
    top_level = param.split(".")[0].split("[")[0]
    assert_rejected_field(caught.value, param, top_level, UNSUPPORTED_FIELDS)


async def test_web_search_needs_the_allowlist(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="scripted", input="x", tools=[{"type": "web_search"}])
    assert caught.value.param == "tools[0].type"


async def test_unknown_model_is_404(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.NotFoundError) as caught:
        await client.responses.create(model="missing", input="x")
    assert caught.value.code == "model_not_found"


async def test_foreground_ids_are_not_retrievable_or_cancellable(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="scripted", input="x")
    with pytest.raises(openai.NotFoundError):
        await client.responses.retrieve(response.id)
    with pytest.raises(openai.NotFoundError):
        await client.responses.cancel(response.id)


async def test_refusal_is_a_refusal_part(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="response-outcomes", input="x", metadata=lgos_settings(outcome="refusal")
    )
    assert response.status == "completed"
    [part] = response.output[0].content
    assert part.type == "refusal"
    assert part.refusal == "I can't help with that request."


async def test_incomplete_answer_keeps_reason_and_usage(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="response-outcomes",
        input="please stop early",
        metadata=lgos_settings(outcome="incomplete"),
    )
    assert response.status == "incomplete"
    assert response.incomplete_details is not None
    assert response.incomplete_details.reason == "max_output_tokens"
    assert response.output[0].status == "incomplete"
    assert response.usage is not None and response.usage.output_tokens == 6


async def test_graph_failure_is_a_generic_500(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.InternalServerError) as caught:
        await client.responses.create(model="broken", input="x")
    assert caught.value.status_code == 500
    assert caught.value.body == server_error("Internal server error", "server_error")
    assert SECRET not in caught.value.response.text


async def test_context_overflow_is_400_context_length_exceeded(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="context-overflow", input="x")
    assert caught.value.code == "context_length_exceeded"
    assert SECRET not in caught.value.response.text


async def test_adapter_errors_keep_their_param_and_code(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="needs-tenant", input="x")
    assert caught.value.param == "metadata.tenant"
    assert caught.value.code == "tenant_required"
    ok = await client.responses.create(model="needs-tenant", input="x", metadata={"tenant": "t"})
    assert ok.output_text == SCRIPTED_TEXT


async def test_usage_is_aggregated_across_model_calls(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="private-then-answer", input="x")
    assert response.usage is not None
    assert (response.usage.input_tokens, response.usage.output_tokens) == (4, 7)
    assert response.usage.total_tokens == 11


async def test_usage_is_omitted_when_not_reported(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="no-usage", input="x")
    assert response.output_text == SCRIPTED_TEXT
    assert response.usage is None


async def test_empty_include_is_accepted(client: AsyncOpenAI) -> None:
    # The OpenAI Agents SDK sends include=[] on every Responses call.
    response = await client.responses.create(model="scripted", input="x", include=[])
    assert response.output_text == SCRIPTED_TEXT
    stream = await client.responses.create(model="scripted", input="x", include=[], stream=True)
    events = [event.type async for event in stream]
    assert events[-1] == "response.completed"


async def test_non_empty_include_names_its_values(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(
            model="scripted", input="x", include=["message.output_text.logprobs"]
        )
    assert caught.value.param == "include"
    assert caught.value.code == "unsupported_parameter"
    assert "message.output_text.logprobs" in caught.value.message


async def test_lax_settings_values_are_rejected(client: AsyncOpenAI) -> None:
    for raw in ('{"flag": "yes"}', '{"flag": "true"}', '{"flag": 0}'):
        with pytest.raises(openai.BadRequestError) as caught:
            await echo(client, metadata={"lgos_settings": raw})
        assert caught.value.param == "metadata.lgos_settings", raw
    report = await echo(client, metadata={"lgos_settings": '{"flag": true}'})
    assert report["settings"]["flag"] is True
