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
    """Sums reported token usage and remembers which messages came from private model calls;
    with tracing on, hands the model, tool and chain events on to the run's span recorder.

    ``run_inline`` keeps LangChain from hopping to a thread for every callback (every token of
    every streamed model call reaches this handler); only model starts and ends, and with a
    span recorder tool and chain starts and ends, do any work. One handler for both: LangChain
    dispatches every streamed token to every handler, a few microseconds each.
    """

    run_inline = True
    ignore_retriever = True
    ignore_custom_event = True

    def __init__(self) -> None:
        self._usage: Usage | None = None
        self._private_runs: set[UUID] = set()
        self.private_message_ids: set[str] = set()
        self._spans: BaseCallbackHandler | None = None

    def record_spans(self, recorder: BaseCallbackHandler) -> None:
        """Hand model, tool and chain events on to ``recorder`` (the run's span recorder)."""
        self._spans = recorder

    @property
    def ignore_chain(self) -> bool:
        # Asked by LangChain at each chain event: the recorder wants them only some of the time.
        return self._spans is None or self._spans.ignore_chain

    @property
    def ignore_agent(self) -> bool:  # LangChain's switch for tool events
        return self._spans is None

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
        if self._spans is not None:
            self._spans.on_chat_model_start(
                serialized, messages, run_id=run_id, tags=tags, **kwargs
            )

    def on_llm_end(self, response: LLMResult, *, run_id: UUID, **kwargs: Any) -> None:
        if self._spans is not None:
            self._spans.on_llm_end(response, run_id=run_id, **kwargs)
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

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._private_runs.discard(run_id)
        if self._spans is not None:
            self._spans.on_llm_error(error, run_id=run_id, **kwargs)

    def on_chain_start(
        self, serialized: dict[str, Any], inputs: dict[str, Any], *, run_id: UUID, **kwargs: Any
    ) -> None:
        if self._spans is not None:
            self._spans.on_chain_start(serialized, inputs, run_id=run_id, **kwargs)

    def on_tool_start(
        self, serialized: dict[str, Any], input_str: str, *, run_id: UUID, **kwargs: Any
    ) -> None:
        if self._spans is not None:
            self._spans.on_tool_start(serialized, input_str, run_id=run_id, **kwargs)

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        if self._spans is not None:
            self._spans.on_tool_end(output, run_id=run_id, **kwargs)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        if self._spans is not None:
            self._spans.on_tool_error(error, run_id=run_id, **kwargs)

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
