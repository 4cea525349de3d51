"""Test doubles for graph authors: ``ScriptedFakeChatModel``, a fake chat model (no network).

A graph's tests and benchmarks need a model that answers exactly and repeatably; a real model
cannot. Build the graph around the fake, then drive it through ``create_app`` and the OpenAI SDK::

    from lgos.testing import ScriptedFakeChatModel

    model = ScriptedFakeChatModel.saying("Hello there.", usage={...})

It is a fake and says so: its LangChain ``_llm_type`` is ``"scripted-fake"``. Never serve it as a
real model.
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


class ScriptedFakeChatModel(BaseChatModel):
    """A fake chat model that streams fixed ``pieces`` and reports ``usage`` on the last one.

    Invoking it returns the pieces joined; streaming yields them one chunk each (a
    ``chunk_position="last"`` marker on the final one), pausing ``delay`` seconds before each
    piece. The messages it is given do not change what it says.
    """

    pieces: list[str]
    """The answer, in the chunks it streams in."""
    usage: UsageMetadata | None = None
    """Token usage reported with the final chunk (and the invoked message); none when unset."""
    delay: float = 0.0
    """Seconds to sleep before each streamed piece."""
    yield_between: bool = False
    """Yield to the event loop between pieces (as a model streaming from a socket does)."""

    @classmethod
    def saying(cls, text: str, *, parts: int | None = None, **kwargs: Any) -> ScriptedFakeChatModel:
        """Stream ``text`` word by word, or in ``parts`` pieces of about equal length."""
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
