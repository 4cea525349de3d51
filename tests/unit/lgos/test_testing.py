"""``lgos.testing``: the scripted fake chat model says exactly what it was scripted to."""

from __future__ import annotations

from langchain_core.messages import HumanMessage
from lgos.testing import ScriptedFakeChatModel

USAGE = {"input_tokens": 2, "output_tokens": 3, "total_tokens": 5}


async def test_streams_its_pieces_with_usage_on_the_last() -> None:
    model = ScriptedFakeChatModel.saying("one two three", usage=USAGE)  # type: ignore[arg-type]
    chunks = [chunk async for chunk in model.astream([HumanMessage("ignored")])]
    assert [chunk.content for chunk in chunks] == ["one ", "two ", "three"]
    assert [chunk.usage_metadata for chunk in chunks] == [None, None, USAGE]
    assert chunks[-1].chunk_position == "last"


async def test_invoke_joins_the_pieces_and_parts_split_evenly() -> None:
    model = ScriptedFakeChatModel.saying("abcdef", parts=3)
    assert model.pieces == ["ab", "cd", "ef"]
    answer = await model.ainvoke("anything")
    assert answer.content == "abcdef"
    assert answer.usage_metadata is None
    assert model._llm_type == "scripted-fake"
