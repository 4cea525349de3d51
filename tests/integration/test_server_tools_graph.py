"""server-tools through LGOS with the real offline-model and SearXNG: the web-search citation
example from the advanced-graph page, package_version, parallel calls and streamed events."""

from __future__ import annotations

from openai import AsyncOpenAI


def citations(response: object) -> list[str]:
    return [
        annotation.url
        for item in response.output  # type: ignore[attr-defined]
        if item.type == "message"
        for part in item.content
        if part.type == "output_text"
        for annotation in part.annotations
        if annotation.type == "url_citation"
    ]


async def test_web_search_citation_example(client: AsyncOpenAI) -> None:
    response = await client.responses.create(
        model="server-tools",
        input="Find the current LangGraph interrupt guidance and cite it.",
        tools=[{"type": "web_search"}],
        tool_choice="required",
        store=False,
    )
    assert [item.type for item in response.output] == ["web_search_call", "message"]
    urls = citations(response)
    assert urls[0] == "https://docs.langchain.com/oss/python/langgraph/interrupts"
    text = response.output[1].content[0].text
    for annotation in response.output[1].content[0].annotations:
        assert text[annotation.start_index : annotation.end_index + 1] == annotation.url


async def test_package_version_and_search_in_parallel(client: AsyncOpenAI) -> None:
    import importlib.metadata

    response = await client.responses.create(
        model="server-tools",
        input="What package version of langgraph is installed? Also web search for streaming.",
        tools=[{"type": "custom", "name": "package_version"}, {"type": "web_search"}],
    )
    kinds = [item.type for item in response.output]
    assert kinds == ["custom_tool_call", "custom_tool_call_output", "web_search_call", "message"]
    output = response.output[1]
    assert output.output == f"langgraph=={importlib.metadata.version('langgraph')}"
    assert output.output in response.output_text  # the answer used the tool result


async def test_streamed_search_events_and_status(client: AsyncOpenAI) -> None:
    stream = await client.responses.create(
        model="server-tools",
        input="web search persistence checkpointers",
        tools=[{"type": "web_search"}],
        stream=True,
    )
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    answer_id = events[-1].response.output[-1].id
    first_answer_delta = next(
        i
        for i, e in enumerate(events)
        if e.type == "response.output_text.delta" and e.item_id == answer_id
    )
    assert kinds.index("response.web_search_call.searching") < kinds.index(
        "response.web_search_call.completed"
    )
    assert kinds.index("response.web_search_call.completed") < first_answer_delta
    commentary = [
        e.item
        for e in events
        if e.type == "response.output_item.done" and getattr(e.item, "phase", None) == "commentary"
    ]
    assert [c.content[0].text for c in commentary] == ["Searching the web"]
    assert "response.output_text.annotation.added" in kinds
    assert events[-1].type == "response.completed"


async def test_no_selection_means_no_tools(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="server-tools", input="web search anything")
    assert [item.type for item in response.output] == ["message"]
    completion = await client.chat.completions.create(
        model="server-tools", messages=[{"role": "user", "content": "web search anything"}]
    )
    assert completion.choices[0].finish_reason == "stop"
