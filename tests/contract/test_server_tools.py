"""Server tools: selection, custom_tool_call / web_search_call items, their events, replay."""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest
from openai import AsyncOpenAI

from tests.support.graphs import FAKE_RESULT_URL, SCRIPTED_TEXT

BOTH = [{"type": "custom", "name": "package_version"}, {"type": "web_search"}]


async def test_selected_tools_run_inside_one_response(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="tool-runner", input="versions?", tools=BOTH)
    assert response.status == "completed"
    kinds = [item.type for item in response.output]
    assert kinds == ["custom_tool_call", "custom_tool_call_output", "web_search_call", "message"]
    call, output, search, message = response.output
    assert (call.name, call.input, call.call_id) == (
        "package_version",
        "langgraph",
        "call_package_version",
    )
    assert output.call_id == call.call_id
    assert output.output == "langgraph 1.2.3"
    assert search.status == "completed"
    assert search.action.type == "search" and search.action.query == "lg"
    assert message.content[0].text == SCRIPTED_TEXT
    dumped = response.model_dump_json()
    assert "internal_lookup" not in dumped and "internal k" not in dumped
    assert FAKE_RESULT_URL not in dumped  # backend result payloads stay private
    assert [t.type for t in response.tools] == ["custom", "web_search"]


async def test_only_selected_tools_are_reported(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="tool-runner", input="x", tools=[{"type": "custom", "name": "package_version"}]
    )
    assert [i.type for i in response.output] == [
        "custom_tool_call",
        "custom_tool_call_output",
        "message",
    ]


async def test_streamed_tool_events(client: AsyncOpenAI) -> None:
    stream = await client.responses.create(
        model="tool-runner", input="versions?", tools=BOTH, stream=True
    )
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    tool_part = kinds[2 : kinds.index("response.content_part.added") - 1]
    assert tool_part == [
        "response.output_item.added",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.output_item.done",
        "response.output_item.added",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.output_item.added",
        "response.output_item.done",
        "response.web_search_call.completed",
        "response.output_item.done",
    ]
    delta = next(e for e in events if e.type == "response.custom_tool_call_input.delta")
    assert delta.delta == "langgraph"
    searching = next(e for e in events if e.type == "response.web_search_call.searching")
    completed = next(e for e in events if e.type == "response.web_search_call.completed")
    assert searching.item_id == completed.item_id
    assert searching.output_index == completed.output_index == 1
    final = events[-1]
    assert final.type == "response.completed"
    assert [i.type for i in final.response.output] == [
        "custom_tool_call",
        "web_search_call",
        "custom_tool_call_output",
        "message",
    ]
    assert final.response.output[1].status == "completed"
    assert [e.sequence_number for e in events] == list(range(len(events)))


async def test_repeated_call_ids_fail(client: AsyncOpenAI) -> None:
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="tool-repeats-ids", input="x", tools=BOTH)
    stream = await client.responses.create(
        model="tool-repeats-ids", input="x", tools=BOTH, stream=True
    )
    events = [e async for e in stream]
    assert events[-1].type == "response.failed"


async def test_a_selected_call_without_a_result_cannot_complete(client: AsyncOpenAI) -> None:
    stream = await client.responses.create(
        model="tool-without-result", input="x", tools=BOTH, stream=True
    )
    events = [e async for e in stream]
    assert events[-1].type == "response.failed"
    search = next(i for i in events[-1].response.output if i.type == "web_search_call")
    assert search.status == "incomplete"
    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="tool-without-result", input="x", tools=BOTH)


async def test_replayed_server_items_reach_the_graph(client: AsyncOpenAI) -> None:
    first = await client.responses.create(model="tool-runner", input="versions?", tools=BOTH)
    replay: list[Any] = [{"role": "user", "content": "versions?"}]
    replay += [item.model_dump(exclude_none=True) for item in first.output]
    replay.append({"role": "user", "content": "and now?"})
    report = json.loads(
        (await client.responses.create(model="echo-request", input=replay)).output_text
    )
    types = [m["type"] for m in report["messages"]]
    # call, its output, then the search and the answer: each replayed item in input order
    assert types == ["human", "ai", "tool", "ai", "ai", "human"]
    [call] = report["messages"][1]["content"]
    assert call["type"] == "custom_tool_call" and call["input"] == "langgraph"
    assert report["messages"][2]["content"] == [
        {"type": "custom_tool_call_output", "output": "langgraph 1.2.3"}
    ]
    [search] = report["messages"][3]["content"]
    assert search["type"] == "web_search_call"
    assert search["status"] == "completed"
    assert search["action"] == {"type": "search", "query": "lg"}
    assert search["id"] == first.output[2].id


async def test_replayed_custom_pairs_are_validated(client: AsyncOpenAI) -> None:
    items = [
        {"role": "user", "content": "q"},
        {"type": "custom_tool_call", "call_id": "c1", "name": "package_version", "input": "x"},
    ]
    with pytest.raises(openai.BadRequestError) as caught:
        await client.responses.create(model="tool-runner", input=items)
    assert caught.value.code == "missing_tool_output"


async def test_required_web_search_choice(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="tool-runner", input="x", tools=[{"type": "web_search"}], tool_choice="required"
    )
    assert response.tool_choice == "required"
    assert [i.type for i in response.output] == ["web_search_call", "message"]


async def test_chat_runs_the_graph_without_server_tools(client: AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="tool-runner", messages=[{"role": "user", "content": "x"}]
    )
    assert completion.choices[0].message.content == SCRIPTED_TEXT
