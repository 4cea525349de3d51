"""Per-run usage aggregation and tracking of private (``nostream``) model output."""

from __future__ import annotations

from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import BaseMessage
from langchain_core.outputs import ChatGeneration, LLMResult
from langgraph.constants import TAG_NOSTREAM

from lgos.runtime.events import Usage


class RunObserver(BaseCallbackHandler):
    """Sums reported token usage and remembers which messages came from private model calls.

    ``run_inline`` keeps LangChain from hopping to a thread for every callback (every token of
    every streamed model call reaches this handler); only ``on_chat_model_start`` and
    ``on_llm_end`` do any work.
    """

    run_inline = True
    ignore_chain = True
    ignore_agent = True
    ignore_retriever = True
    ignore_custom_event = True

    def __init__(self) -> None:
        self._usage: Usage | None = None
        self._private_runs: set[UUID] = set()
        self.private_message_ids: set[str] = set()

    @property
    def usage(self) -> Usage | None:
        """``None`` when no model call reported usage: LGOS never estimates."""
        return self._usage

    def on_chat_model_start(
        self,
        serialized: dict[str, Any],
        messages: list[list[BaseMessage]],
        *,
        run_id: UUID,
        tags: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        if tags and TAG_NOSTREAM in tags:
            self._private_runs.add(run_id)

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        private = run_id in self._private_runs
        self._private_runs.discard(run_id)
        for generations in response.generations:
            for generation in generations:
                if not isinstance(generation, ChatGeneration):
                    continue
                message = generation.message
                if private and message.id:
                    self.private_message_ids.add(message.id)
                reported = getattr(message, "usage_metadata", None)
                if reported:
                    self._add(reported)

    def _add(self, reported: Any) -> None:
        input_details = reported.get("input_token_details") or {}
        output_details = reported.get("output_token_details") or {}
        usage = Usage(
            input_tokens=int(reported.get("input_tokens", 0)),
            output_tokens=int(reported.get("output_tokens", 0)),
            total_tokens=int(reported.get("total_tokens", 0)),
            cached_tokens=int(input_details.get("cache_read", 0) or 0),
            reasoning_tokens=int(output_details.get("reasoning", 0) or 0),
        )
        if self._usage is None:
            self._usage = usage
        else:
            self._usage.add(usage)
