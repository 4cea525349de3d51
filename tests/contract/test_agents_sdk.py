"""The OpenAI Agents SDK (``openai-agents``) as a real client of LGOS: an agent per graph.

The SDK sends ``include: []`` and replays its own item ledger on every turn, so these tests
cover what any agent built with it does, through its own Runner loop.
"""

from __future__ import annotations

import pytest
from agents import (
    Agent,
    ModelSettings,
    OpenAIResponsesModel,
    RunConfig,
    Runner,
    function_tool,
)
from openai import AsyncOpenAI

RUN_CONFIG = RunConfig(tracing_disabled=True)
summed: list[list[int]] = []


@function_tool
def calculate_sum(numbers: list[int]) -> int:
    """Add a list of integers."""
    summed.append(numbers)
    return sum(numbers)


@pytest.fixture
async def agent_client(client: AsyncOpenAI) -> AsyncOpenAI:
    summed.clear()
    return client


def simple_agent(client: AsyncOpenAI, **kwargs: object) -> Agent:
    model = OpenAIResponsesModel(model="simple-graph", openai_client=client)
    return Agent(name="lgos", instructions="Answer briefly.", model=model, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_agent_answers_on_simple_graph(agent_client: AsyncOpenAI, streamed: bool) -> None:
    agent = simple_agent(agent_client)
    if streamed:
        result = Runner.run_streamed(agent, "What is LangGraph?", run_config=RUN_CONFIG)
        deltas = [
            event.data.delta
            async for event in result.stream_events()
            if event.type == "raw_response_event"
            and event.data.type == "response.output_text.delta"
        ]
        assert deltas
        assert "".join(deltas) == result.final_output
    else:
        result = await Runner.run(agent, "What is LangGraph?", run_config=RUN_CONFIG)
    assert isinstance(result.final_output, str)
    assert "[offline-model: deterministic stand-in, not a real model]" in result.final_output
    assert 'You said: "What is LangGraph?"' in result.final_output


@pytest.mark.parametrize("streamed", [False, True], ids=["run", "streamed"])
async def test_agent_completes_the_calculate_sum_round_trip(
    agent_client: AsyncOpenAI, streamed: bool
) -> None:
    agent = simple_agent(
        agent_client,
        tools=[calculate_sum],
        model_settings=ModelSettings(tool_choice="calculate_sum"),
        reset_tool_choice=True,
    )
    prompt = "Add 12, 30, and 5."
    if streamed:
        result = Runner.run_streamed(agent, prompt, run_config=RUN_CONFIG)
        kinds = [event.type async for event in result.stream_events()]
        assert "run_item_stream_event" in kinds
    else:
        result = await Runner.run(agent, prompt, run_config=RUN_CONFIG)
    assert summed == [[12, 30, 5]]  # the SDK ran our function once, with the graph's arguments
    calls = [item for item in result.new_items if item.type == "tool_call_item"]
    outputs = [item for item in result.new_items if item.type == "tool_call_output_item"]
    assert len(calls) == 1 and len(outputs) == 1
    assert outputs[0].output == 47
    assert "47" in result.final_output
