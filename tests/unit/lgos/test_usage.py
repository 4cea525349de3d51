from __future__ import annotations

from typing import Any
from uuid import uuid4

from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from lgos.runtime.usage import RunObserver


def _result(content: str, message_id: str | None = None, **usage: Any) -> LLMResult:
    """A model call's result; ``usage`` (tokens in, out, total, and any details) when given."""
    message = AIMessage(content=content, id=message_id, usage_metadata=usage or None)
    return LLMResult(generations=[[ChatGeneration(message=message)]])


def test_usage_sums_reported_calls_and_remembers_private_messages() -> None:
    observer = RunObserver()
    assert observer.usage is None
    public, private = uuid4(), uuid4()
    observer.on_chat_model_start({}, [[]], run_id=private, tags=["nostream"])
    observer.on_chat_model_start({}, [[]], run_id=public, tags=[])
    private_usage = {"input_tokens": 1, "output_tokens": 2, "total_tokens": 3}
    observer.on_llm_end(
        _result("p", "private-1", **private_usage, input_token_details={"cache_read": 1}),
        run_id=private,
    )
    observer.on_llm_end(_result("a", "public-1"), run_id=public)
    public_usage = {"input_tokens": 10, "output_tokens": 20, "total_tokens": 30}
    observer.on_llm_end(
        _result("b", **public_usage, output_token_details={"reasoning": 4}), run_id=uuid4()
    )
    usage = observer.usage
    assert usage is not None
    assert (usage.input_tokens, usage.output_tokens, usage.total_tokens) == (11, 22, 33)
    assert (usage.cached_tokens, usage.reasoning_tokens) == (1, 4)
    assert observer.private_message_ids == {"private-1"}
