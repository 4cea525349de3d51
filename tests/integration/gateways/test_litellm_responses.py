"""Responses and Chat Completions through the real LiteLLM proxy, compared with LGOS directly.

Checks LiteLLM's reported fake-streaming pitfall: every typed event (text, custom tool,
function-call arguments) must arrive through the gateway exactly as LGOS sent it.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from openai import AsyncOpenAI

from tests.support.advanced import CALCULATE_SUM
from tests.support.clients import sdk_fixture

SERVER_TOOLS = [{"type": "custom", "name": "package_version"}, {"type": "web_search"}]


async def stream_events(client: AsyncOpenAI, model: str, **kwargs: Any) -> list[Any]:
    stream = await client.responses.create(model=model, stream=True, **kwargs)
    return [event async for event in stream]


direct = sdk_fixture("lgos_server")


async def test_text_stream_keeps_event_types_and_text_parity(
    gateway: AsyncOpenAI, direct: AsyncOpenAI
) -> None:
    prompt = "Explain idempotency in one sentence."
    through = await stream_events(gateway, "lgos/simple-graph", input=prompt)
    straight = await stream_events(direct, "simple-graph", input=prompt)
    assert [e.type for e in through] == [e.type for e in straight]
    deltas = "".join(e.delta for e in through if e.type == "response.output_text.delta")
    final = through[-1]
    assert final.type == "response.completed"
    assert deltas == final.response.output_text == straight[-1].response.output_text
    assert deltas  # a real answer, not an empty fake stream
    assert [e.sequence_number for e in through] == list(range(len(through)))


async def test_function_call_argument_events_survive(
    gateway: AsyncOpenAI, direct: AsyncOpenAI
) -> None:
    kwargs: dict[str, Any] = {"input": "Please calculate sum of 2 and 3", "tools": [CALCULATE_SUM]}
    through = await stream_events(gateway, "lgos/simple-graph", **kwargs)
    straight = await stream_events(direct, "simple-graph", **kwargs)
    kinds = [e.type for e in through]
    assert kinds == [e.type for e in straight]
    assert "response.function_call_arguments.delta" in kinds
    done = next(e for e in through if e.type == "response.function_call_arguments.done")
    assert json.loads(done.arguments) == {"numbers": [2, 3]}
    delta = next(e for e in through if e.type == "response.function_call_arguments.delta")
    assert delta.delta == done.arguments


async def test_custom_tool_and_web_search_events_survive(
    gateway: AsyncOpenAI, direct: AsyncOpenAI
) -> None:
    kwargs: dict[str, Any] = {"input": "versions?", "tools": SERVER_TOOLS}
    through = await stream_events(gateway, "lgos/tool-runner", **kwargs)
    straight = await stream_events(direct, "tool-runner", **kwargs)
    kinds = [e.type for e in through]
    assert kinds == [e.type for e in straight]
    assert "response.custom_tool_call_input.delta" in kinds
    assert "response.web_search_call.completed" in kinds
    delta = next(e for e in through if e.type == "response.custom_tool_call_input.delta")
    assert delta.delta == "langgraph"
    final = through[-1].response
    assert [i.type for i in final.output] == [i.type for i in straight[-1].response.output]


async def test_metadata_and_fields_pass_through(gateway: AsyncOpenAI) -> None:
    metadata = {"conversation_id": "conv-gw-1", "team": "docs"}
    response = await gateway.responses.create(
        model="lgos/simple-graph", input="Say hello.", metadata=metadata, store=False
    )
    assert response.status == "completed"
    assert response.metadata == metadata
    assert response.output_text
    assert response.id  # LiteLLM's encoded id, usable as previous_response_id (below)


async def test_chat_completions_stay_chat_completions(
    gateway: AsyncOpenAI, direct: AsyncOpenAI
) -> None:
    messages: Any = [{"role": "user", "content": "Name one benefit of retries."}]
    through = await gateway.chat.completions.create(model="lgos/simple-graph", messages=messages)
    straight = await direct.chat.completions.create(model="simple-graph", messages=messages)
    assert through.object == "chat.completion"
    assert through.choices[0].message.content == straight.choices[0].message.content
    assert through.choices[0].finish_reason == straight.choices[0].finish_reason == "stop"


async def test_each_protocol_reaches_lgos_unconverted(gateway: AsyncOpenAI) -> None:
    """echo-request reports the protocol LGOS decoded: LiteLLM must not convert between them."""
    chat = await gateway.chat.completions.create(
        model="lgos/echo-request", messages=[{"role": "user", "content": "hi"}]
    )
    assert json.loads(chat.choices[0].message.content or "")["protocol"] == "chat"
    response = await gateway.responses.create(model="lgos/echo-request", input="hi")
    assert json.loads(response.output_text)["protocol"] == "responses"


async def test_chat_stream_through_the_gateway(gateway: AsyncOpenAI, direct: AsyncOpenAI) -> None:
    messages: Any = [{"role": "user", "content": "Name one benefit of retries."}]
    stream = await gateway.chat.completions.create(
        model="lgos/simple-graph", messages=messages, stream=True
    )
    text = "".join([c.choices[0].delta.content or "" async for c in stream if c.choices])
    straight = await direct.chat.completions.create(model="simple-graph", messages=messages)
    assert text == straight.choices[0].message.content


async def test_interrupt_pauses_and_resumes_through_the_gateway(gateway: AsyncOpenAI) -> None:
    model = "lgos/interruptible-approval"
    paused = await gateway.responses.create(model=model, input="Rename the project")
    [call] = paused.output
    assert call.type == "function_call" and call.name == "lgos_interrupt"
    # LiteLLM rewrites response ids and must decode them on the way back.
    assert not paused.id.startswith("resp_lg_")
    done = await gateway.responses.create(
        model=model,
        previous_response_id=paused.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "approve"}],
    )
    assert done.status == "completed"
    assert done.output_text.startswith("Decision: approved.")
    assert done.id != paused.id


async def test_streamed_interrupt_resume_through_the_gateway(gateway: AsyncOpenAI) -> None:
    model = "lgos/interruptible-approval"
    events = await stream_events(gateway, model, input="Stream the question")
    paused = events[-1].response
    [call] = paused.output
    assert call.name == "lgos_interrupt"
    resumed = await stream_events(
        gateway,
        model,
        previous_response_id=paused.id,
        input=[{"type": "function_call_output", "call_id": call.call_id, "output": "reject"}],
    )
    assert resumed[-1].type == "response.completed"
    assert resumed[-1].response.output_text.startswith("Decision: rejected.")


async def test_events_arrive_as_they_happen_not_buffered(gateway: AsyncOpenAI) -> None:
    """A faked stream arrives in one burst at the end; a real one spreads like the graph does."""
    loop = asyncio.get_running_loop()
    stream = await gateway.responses.create(
        model="lgos/slow-stream-background", input="Stream slowly.", stream=True
    )
    arrivals = [(event.type, loop.time()) async for event in stream]
    first_delta = next(t for kind, t in arrivals if kind == "response.output_text.delta")
    completed = next(t for kind, t in arrivals if kind == "response.completed")
    deltas = [kind for kind, _ in arrivals if kind == "response.output_text.delta"]
    assert len(deltas) > 1
    assert completed - first_delta >= 0.2  # the graph sleeps 0.25 s between chunks


async def test_the_callers_request_id_reaches_lgos(gateway: AsyncOpenAI) -> None:
    # LGOS answers with the id it kept, which LiteLLM relays as llm_provider-x-request-id; a
    # dropped header would show LGOS's own generated req_... there.
    raw = await gateway.responses.with_raw_response.create(
        model="lgos/simple-graph", input="Hi", extra_headers={"X-Request-Id": "gw-turn-1"}
    )
    assert raw.headers["llm_provider-x-request-id"] == "gw-turn-1"
    async with gateway.responses.with_streaming_response.create(
        model="lgos/simple-graph",
        input="Hi",
        stream=True,
        extra_headers={"X-Request-Id": "gw-turn-2"},
    ) as streamed:
        assert streamed.headers["llm_provider-x-request-id"] == "gw-turn-2"
        assert [e async for e in await streamed.parse()][-1].type == "response.completed"
