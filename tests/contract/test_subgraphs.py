"""Graphs whose nodes are subgraphs: statuses and answer tokens from inside stream like any
node's; nested updates stay private; a subgraph may loop back to ask again after a resume."""

from __future__ import annotations

from typing import Any

from openai import AsyncOpenAI

from tests.support.graphs import SCRIPTED_TEXT, SECRET


async def test_statuses_and_tokens_from_a_subgraph_stream(client: AsyncOpenAI) -> None:
    stream = await client.responses.create(model="subgraph", input="hi", stream=True)
    events = [event async for event in stream]
    done = [e.item for e in events if e.type == "response.output_item.done"]
    assert [(i.phase, i.content[0].text) for i in done] == [
        ("commentary", "Working inside a subgraph"),
        ("final_answer", SCRIPTED_TEXT),
    ]
    answer_deltas = [
        e.delta
        for e in events
        if e.type == "response.output_text.delta" and e.item_id == done[1].id
    ]
    assert len(answer_deltas) > 1  # token by token, not one final chunk
    assert SECRET not in str([e.model_dump() for e in events])
    plain = await client.responses.create(model="subgraph", input="hi")
    assert plain.output_text == SCRIPTED_TEXT


def answer(response: Any, output: str) -> list[dict[str, str]]:
    call = response.output[0]
    assert call.name == "lgos_interrupt"
    return [{"type": "function_call_output", "call_id": call.call_id, "output": output}]


async def test_a_subgraph_may_ask_again_from_a_new_node_invocation(client: AsyncOpenAI) -> None:
    first = await client.responses.create(model="subgraph-review-loop", input="start")
    second = await client.responses.create(
        model="subgraph-review-loop", previous_response_id=first.id, input=answer(first, "more")
    )
    assert second.output[0].call_id != first.output[0].call_id
    done = await client.responses.create(
        model="subgraph-review-loop", previous_response_id=second.id, input=answer(second, "done")
    )
    assert done.output_text == "more done"
