"""url_citation annotations: Responses parts and events, Chat annotations, the delta extension."""

from __future__ import annotations

import json

import httpx
import pytest
from lgos_demo_graphs.citation_events import SOURCES
from openai import AsyncOpenAI

from tests.support.servers import Server


def assert_exact_spans(text: str, annotations: list[dict[str, object]]) -> None:
    assert [a["url"] for a in annotations] == [s.url for s in SOURCES]
    for annotation, source in zip(annotations, SOURCES, strict=True):
        start, end = annotation["start_index"], annotation["end_index"]
        assert isinstance(start, int) and isinstance(end, int)
        assert text[start : end + 1] == source.url  # end_index is inclusive
        assert annotation["title"] == source.title


async def test_responses_annotations(client: AsyncOpenAI) -> None:
    response = await client.responses.create(model="citation-events", input="How do I resume?")
    [part] = response.output[0].content
    assert part.type == "output_text"
    assert_exact_spans(part.text, [a.model_dump() for a in part.annotations])
    assert all(a.type == "url_citation" for a in part.annotations)


async def test_streamed_annotations_arrive_before_the_text_completes(client: AsyncOpenAI) -> None:
    stream = await client.responses.create(
        model="citation-events", input="How do I resume?", stream=True
    )
    events = [e async for e in stream]
    kinds = [e.type for e in events]
    added = [e for e in events if e.type == "response.output_text.annotation.added"]
    assert [e.annotation_index for e in added] == [0, 1]
    assert kinds.index("response.output_text.annotation.added") < kinds.index(
        "response.output_text.done"
    )
    text = "".join(e.delta for e in events if e.type == "response.output_text.delta")
    assert_exact_spans(text, [e.annotation.model_dump() for e in added])
    final = events[-1].response.output[0].content[0]
    assert [a.url for a in final.annotations] == [s.url for s in SOURCES]


async def test_chat_annotations(client: AsyncOpenAI) -> None:
    completion = await client.chat.completions.create(
        model="citation-events", messages=[{"role": "user", "content": "Cite it"}]
    )
    message = completion.choices[0].message
    annotations = [
        {**a.url_citation.model_dump(), "url": a.url_citation.url}
        for a in message.annotations or []
    ]
    assert_exact_spans(message.content or "", annotations)


async def test_chat_stream_carries_annotations_on_the_final_delta(lgos_server: Server) -> None:
    body = {
        "model": "citation-events",
        "stream": True,
        "messages": [{"role": "user", "content": "Cite it"}],
    }
    async with httpx.AsyncClient(base_url=lgos_server.url) as http:
        response = await http.post("/v1/chat/completions", json=body)
    chunks = [
        json.loads(line[6:]) for line in response.text.splitlines() if line.startswith("data: {")
    ]
    text = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"])
    final = next(c for c in chunks if c["choices"] and c["choices"][0]["finish_reason"])
    annotations = [a["url_citation"] for a in final["choices"][0]["delta"]["annotations"]]
    assert_exact_spans(text, annotations)


async def test_invalid_citation_spans_fail_the_response(client: AsyncOpenAI) -> None:
    import openai

    with pytest.raises(openai.InternalServerError):
        await client.responses.create(model="bad-citation", input="x")
    stream = await client.responses.create(model="bad-citation", input="x", stream=True)
    events = [e async for e in stream]
    assert events[-1].type == "response.failed"
    assert events[-1].response.output[0].status == "incomplete"
