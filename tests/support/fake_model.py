"""ScriptedChatModel: a named fake chat model for tests and benchmarks (no network).

It stands where a real model cannot be asked for exact, repeatable streaming behaviour:
fixed text in fixed pieces, usage reported or not, optional pacing between pieces.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult


class ScriptedChatModel(BaseChatModel):
    pieces: list[str]
    usage: UsageMetadata | None = None
    delay: float = 0.0
    yield_between: bool = False
    """Yield to the event loop between pieces (as a model streaming from a socket does)."""

    @classmethod
    def saying(cls, text: str, *, parts: int | None = None, **kwargs: Any) -> ScriptedChatModel:
        words = text.split(" ")
        pieces = [w + (" " if i < len(words) - 1 else "") for i, w in enumerate(words)]
        if parts is not None:
            pieces = [
                text[i * len(text) // parts : (i + 1) * len(text) // parts] for i in range(parts)
            ]
        return cls(pieces=pieces, **kwargs)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = AIMessage(content="".join(self.pieces), usage_metadata=self.usage)
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        # Native async, as a real network model is (the default would hop to a thread).
        return self._generate(messages, stop)

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        raise NotImplementedError("use the async API")

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        last = len(self.pieces) - 1
        for index, piece in enumerate(self.pieces):
            if self.delay or self.yield_between:
                await asyncio.sleep(self.delay)
            message = AIMessageChunk(
                content=piece, usage_metadata=self.usage if index == last else None
            )
            if index == last:
                message.chunk_position = "last"
            chunk = ChatGenerationChunk(message=message)
            if run_manager is not None:
                await run_manager.on_llm_new_token(piece, chunk=chunk)
            yield chunk
